import { deriveKey } from '../../core/kit/area.js';

/**
 * The key an account's `service` challenges are signed with: HKDF of the master key per account,
 * so a challenge one account issued never verifies for another, and no key is stored.
 */
export function accountSigningKey(master: Buffer, accountId: string): string {
  return deriveKey(master, 'svc-gateway captcha salt v1', `altcha hmac ${accountId}`).toString('hex');
}
