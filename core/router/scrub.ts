import type { TSchema } from '@sinclair/typebox';
import { SECRET } from '../vendor-api.js';

/** How much of a vendor's failure text a response carries: an excerpt, never the vendor's whole body. */
export const SHOWN_CHARS = 200;
/** How much of it a log line carries. */
export const LOGGED_CHARS = 1000;
const REDACTED = '[redacted]';
// Shorter values are not credentials, and replacing them would shred ordinary words.
const MIN_SECRET_CHARS = 4;

const HEADERS = '(?:proxy-)?authorization|x-api-key|api-key|x-goog-api-key|cookie|set-cookie|x-amz-security-token';
const QUERY_KEYS = 'key|api_key|apikey|access_token|token|x-amz-signature|x-amz-credential|signature';
// Credential-shaped text, for what no list of known secrets can hold: a key the gateway never
// saw (a proxy's own), a header a vendor or proxy echoes back, a key in a query string.
const SHAPES: Array<[RegExp, string]> = [
  [new RegExp(`\\b(${HEADERS})(\\\\?["']?\\s*[:=]\\s*\\\\?["']?)[^"'\\\\\\r\\n,}]+`, 'gi'), `$1$2${REDACTED}`],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi, `$1 ${REDACTED}`],
  [new RegExp(`([?&](?:${QUERY_KEYS})=)[^&\\s"'#]+`, 'gi'), `$1${REDACTED}`],
  [/\bsk-[A-Za-z0-9_-]{8,}/g, REDACTED],
  [/\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g, REDACTED],
  [/\bAIza[0-9A-Za-z_-]{30,}/g, REDACTED],
];

/** The forms a secret may take in a vendor's text: as it is, JSON-escaped, URL-encoded, its head ("sk-abcd1234***"). */
function forms(secret: string): string[] {
  const out = [secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)];
  if (secret.length >= 12) out.push(secret.slice(0, 8));
  return out;
}

/**
 * Vendor text with every known secret and everything shaped like a credential replaced: the
 * one scrubber for failures the router records, logs or returns.
 */
export function scrubText(text: string, secrets: Iterable<string>): string {
  let out = text;
  const known = [...secrets].filter((s) => typeof s === 'string' && s.length >= MIN_SECRET_CHARS);
  const all = [...new Set(known.flatMap(forms))];
  // Longest first, so a secret's head never splits the secret itself.
  for (const s of all.sort((a, b) => b.length - a.length)) out = out.split(s).join(REDACTED);
  for (const [re, to] of SHAPES) out = out.replace(re, to);
  return out;
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * A failure's text as a response may show it (scrubbed, then bounded) and as the log may keep it.
 * Scrubbed before it is cut, so a cut never leaves half a secret that no longer matches.
 */
export function failureText(err: unknown, secrets: Iterable<string>): { shown: string; logged: string } {
  const raw = err instanceof Error ? err.message : String(err);
  const clean = scrubText(raw, secrets);
  return { shown: cut(clean, SHOWN_CHARS), logged: cut(clean, LOGGED_CHARS) };
}

/** The values of every config field its schema marks secret, at any depth (cf. plugin-loader's redact). */
export function secretValues(schema: TSchema | undefined, value: unknown): string[] {
  if (!schema || value === null || typeof value !== 'object') return [];
  if (Array.isArray(value)) return value.flatMap((v) => secretValues((schema as { items?: TSchema }).items, v));
  const props = (schema as { properties?: Record<string, TSchema> }).properties ?? {};
  return Object.entries(value).flatMap(([k, v]) => {
    const s = props[k] as (TSchema & { [SECRET]?: boolean }) | undefined;
    if (s?.[SECRET]) return typeof v === 'string' && v ? [v] : [];
    return secretValues(s, v);
  });
}

/** The caller's credentials in a call (BYOK), as a list of values to scrub. */
export function credentialValues(...creds: Array<Record<string, unknown> | undefined | null>): string[] {
  return creds.flatMap((c) => Object.values(c ?? {}).filter((v): v is string => typeof v === 'string' && v.length > 0));
}
