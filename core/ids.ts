import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * Uniform random base62 string. One randomBytes call instead of a randomInt per character
 * (ids are made on every request); bytes of 248 and above are dropped so `% 62` is unbiased.
 */
export function base62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length + 8)) {
      if (b < 248) out += BASE62[b % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/**
 * Prefixed id that says what it is (`acct_…`, `key_…`). A millisecond time part in front
 * keeps ids of one kind roughly ordered by creation, which makes cursors and logs readable.
 */
export function newId(prefix: string): string {
  const t = Date.now().toString(36).padStart(9, '0');
  return `${prefix}_${t}${base62(14)}`;
}

export function randomSecret(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}
