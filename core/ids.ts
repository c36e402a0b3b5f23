import { randomBytes, randomInt } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniform random base62 string (rejection-free: randomInt is unbiased). */
export function base62(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += BASE62[randomInt(62)];
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
