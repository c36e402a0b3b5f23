import { deriveKey } from '../../core/kit/area.js';

// HKDF costs ~100 µs, as much as the rest of a verification's checks, and every challenge and
// verification needs the key: the recent accounts' keys stay here (bounded, oldest out first).
const MAX_CACHED = 10_000;
const caches = new WeakMap<Buffer, Map<string, string>>();

/**
 * The key an account's `service` challenges are signed with: HKDF of the master key per account,
 * so a challenge one account issued never verifies for another, and no key is stored.
 */
export function accountSigningKey(master: Buffer, accountId: string): string {
  let cache = caches.get(master);
  if (!cache) caches.set(master, (cache = new Map()));
  let key = cache.get(accountId);
  if (key === undefined) {
    key = deriveKey(master, 'svc-gateway captcha salt v1', `altcha hmac ${accountId}`).toString('hex');
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
    cache.set(accountId, key);
  }
  return key;
}
