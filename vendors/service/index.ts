import { Type } from '@sinclair/typebox';
import {
  captchaVerdict,
  defineVendor,
  perVerificationMicros,
  VendorFailure,
  decodeAltcha,
  saltParams,
  type CaptchaVerifyInput,
  type CaptchaVerifyOutput,
} from '../../core/kit/vendor.js';

import { SERVICE_USD_PER_VERIFICATION } from './prices.js';
import { solutionSigned } from './verify-solution.js';

const refuse = (reason: string): CaptchaVerifyOutput => ({ valid: false, reason, error_codes: [] });

/**
 * The gateway's own captcha: an ALTCHA v1 proof of work (altcha-lib). The captcha area issues
 * challenges signed with the account's key and passes that key as the input's `secret`; this
 * checks a solution's hash and signature as altcha-lib does (one SHA-256 and one HMAC, synchronous:
 * microseconds, so on the event loop), then its expiry, then the hostname signed in at issue. That a solution is used
 * once is the caller's to enforce: the answer names it (`single_use`) until it expires.
 */
export default defineVendor({
  name: 'service',
  regions: ['global'],
  embedded: true,
  configSchema: Type.Object(
    {
      price_usd_per_verification: Type.Number({
        minimum: 0,
        default: SERVICE_USD_PER_VERIFICATION,
        description: 'What one verification of the built-in proof of work costs the caller, before the markup.',
      }),
    },
    { additionalProperties: false, default: {} }
  ),
  create(config) {
    return {
      capabilities: {
        'captcha.verify': {
          async invoke(input: CaptchaVerifyInput): Promise<CaptchaVerifyOutput> {
            if (!input.secret) throw new VendorFailure('auth', 'service: no signing key given for the account');
            const payload = decodeAltcha(input.token);
            if (!payload) return refuse('malformed_token');
            const params = saltParams(payload.salt);
            const expires = Number(params.expires);
            if (!Number.isSafeInteger(expires) || expires <= 0) return refuse('malformed_token');
            // The expiry is read after the signature, so a tampered one is `invalid_solution`.
            if (!solutionSigned(payload, input.secret)) return refuse('invalid_solution');
            if (expires * 1000 <= Date.now()) return refuse('expired');
            const verdict = captchaVerdict(
              { success: true, hostname: params.host || undefined, error_codes: [] },
              input.expect
            );
            return {
              ...verdict,
              challenge_ts: new Date((expires - Number(params.ttl || 0)) * 1000).toISOString(),
              single_use: { key: payload.challenge, expires_at: expires * 1000 },
              signed: params,
            };
          },
          price: () => perVerificationMicros(config.price_usd_per_verification),
        },
      },
    };
  },
});
