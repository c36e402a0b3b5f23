import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// Random bytes drawn 4 KiB at a time: a getrandom call per id (ids are made on every
// request) costs more than the rest of making the id.
let pool = Buffer.alloc(0);
let at = 0;
function randomByte(): number {
  if (at >= pool.length) {
    pool = randomBytes(4096);
    at = 0;
  }
  return pool[at++];
}

/** Uniform random base62 string; bytes of 248 and above are dropped so `% 62` is unbiased. */
export function base62(length: number): string {
  let out = '';
  while (out.length < length) {
    const b = randomByte();
    if (b < 248) out += BASE62[b % 62];
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
