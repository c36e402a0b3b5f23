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

// A run of the secret this long, in any form and any case, is the secret (half a key still
// narrows a search, and a vendor may echo any part of it); shorter secrets count whole.
const RUN_CHARS = 16;
const HEAD_CHARS = 8;

const b64 = (s: string, from: number) => Buffer.from(s).subarray(from).toString('base64').replace(/=+$/, '');

/**
 * The forms a secret may take in a vendor's text: as it is, JSON-escaped, URL- and
 * form-encoded, base64 (standard and URL-safe, at each of the three byte alignments a prefix
 * such as Basic's `user:` may give it), hex, and its head ("sk-abcd1234***").
 */
function forms(secret: string): string[] {
  const url = encodeURIComponent(secret);
  const out = [secret, JSON.stringify(secret).slice(1, -1), url, url.replace(/%20/g, '+')];
  for (const from of [0, 1, 2]) {
    const std = b64(secret, from);
    out.push(std, std.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  out.push(Buffer.from(secret).toString('hex'));
  if (secret.length >= 12) out.push(secret.slice(0, HEAD_CHARS));
  return out;
}

/** How long a run of `form` must be to be redacted: at most RUN_CHARS, at least half of it (or 8). */
const runOf = (form: string) => Math.min(form.length, RUN_CHARS, Math.max(HEAD_CHARS, Math.ceil(form.length / 2)));

/**
 * Every run of `run` characters of any form, lower-cased, grouped by run length: a text is
 * then scanned once a run length, whatever the number of secrets and forms.
 */
function windows(secrets: string[]): Map<number, Set<string>> {
  const byRun = new Map<number, Set<string>>();
  for (const form of new Set(secrets.flatMap(forms))) {
    if (!form) continue;
    const run = runOf(form);
    const set = byRun.get(run) ?? new Set<string>();
    byRun.set(run, set);
    const lower = form.toLowerCase();
    for (let i = 0; i + run <= lower.length; i++) set.add(lower.slice(i, i + run));
  }
  return byRun;
}

/** `text` with every stretch covered by a run of a known secret's form replaced by one marker. */
function redactRuns(text: string, byRun: Map<number, Set<string>>): string {
  const lower = text.toLowerCase();
  const covered = new Uint8Array(text.length);
  let any = false;
  for (const [run, set] of byRun) {
    for (let i = 0; i + run <= lower.length; i++) {
      if (!set.has(lower.slice(i, i + run))) continue;
      covered.fill(1, i, i + run);
      any = true;
    }
  }
  if (!any) return text;
  let out = '';
  for (let i = 0; i < text.length; ) {
    if (!covered[i]) {
      out += text[i++];
      continue;
    }
    out += REDACTED;
    while (covered[i]) i++;
  }
  return out;
}

/**
 * Vendor text with every known secret and everything shaped like a credential replaced: the
 * one scrubber for failures the router records, logs or returns.
 */
export function scrubText(text: string, secrets: Iterable<string>): string {
  const known = [...secrets].filter((s) => typeof s === 'string' && s.length >= MIN_SECRET_CHARS);
  let out = known.length ? redactRuns(text, windows(known)) : text;
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
