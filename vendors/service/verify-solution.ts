import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { AltchaPayload } from '../../core/kit/vendor.js';

/**
 * altcha-lib v1's `verifySolution` check, with node:crypto's one-shot hashes: the challenge is
 * SHA-256 of salt and number, the signature HMAC-SHA-256 of the challenge under the key's UTF-8
 * bytes. altcha-lib computes the same through WebCrypto, three thread-pool round trips a call,
 * which at volume cost the event loop several times the hashing itself. Expiry is the caller's.
 */
export function solutionSigned(payload: AltchaPayload, hmacKey: string): boolean {
  const challenge = createHash('sha256')
    .update(payload.salt + payload.number)
    .digest('hex');
  if (challenge !== payload.challenge) return false;
  // Compared as the hex text, as altcha-lib does: upper-case digits or padding do not verify.
  const expected = Buffer.from(createHmac('sha256', hmacKey).update(challenge).digest('hex'));
  const given = Buffer.from(payload.signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
