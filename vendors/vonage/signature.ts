import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

// Vonage's signed requests (https://developer.vonage.com/en/getting-started/concepts/signing-messages):
// the same `sig` signs a send and a delivery receipt. Every parameter but `sig`, sorted by key,
// is joined as `&key=value` (a leading `&`, each value's `&` and `=` replaced by `_`, values not
// URL-encoded); `md5hash` is the MD5 of that string with the signature secret appended, the
// others an HMAC of it keyed by the secret. Hex digits; Vonage's HMACs come upper-case.

export const SIGNATURE_METHODS = ['md5hash', 'md5', 'sha1', 'sha256', 'sha512'] as const;
export type SignatureMethod = (typeof SIGNATURE_METHODS)[number];

/** The string Vonage signs: every parameter but `sig`, sorted by key. */
export function signedString(params: Record<string, string>): string {
  let s = '';
  for (const k of Object.keys(params).sort()) if (k !== 'sig') s += `&${k}=${params[k].replace(/[&=]/g, '_')}`;
  return s;
}

/** The `sig` of these parameters, in lower-case hex. */
export function vonageSignature(method: SignatureMethod, secret: string, params: Record<string, string>): string {
  const data = signedString(params);
  if (method === 'md5hash')
    return createHash('md5')
      .update(data + secret, 'utf8')
      .digest('hex');
  return createHmac(method, secret).update(data, 'utf8').digest('hex');
}

/** Whether `params.sig` is Vonage's for the rest of them, compared in constant time (hex in either case). */
export function validVonageSignature(method: SignatureMethod, secret: string, params: Record<string, string>) {
  const want = Buffer.from(vonageSignature(method, secret, params));
  const got = Buffer.from((params.sig ?? '').toLowerCase());
  return want.length === got.length && timingSafeEqual(want, got);
}

/**
 * Whether a receipt's `timestamp` (Unix seconds, signed with it) is within `maxAgeSeconds` of
 * `nowMs`, either way: a captured receipt cannot be replayed later.
 */
export function freshTimestamp(timestamp: string | undefined, maxAgeSeconds: number, nowMs: number): boolean {
  if (!timestamp || !/^\d{1,12}$/.test(timestamp)) return false;
  return Math.abs(nowMs / 1000 - Number(timestamp)) <= maxAgeSeconds;
}
