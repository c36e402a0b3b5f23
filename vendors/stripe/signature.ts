import type Stripe from 'stripe';
import { VendorFailure, type SignedCallback } from '../../core/kit/vendor.js';

/**
 * A webhook's event, verified with the SDK's own check of the `Stripe-Signature` header
 * (HMAC-SHA256 of `t.body` under the endpoint's signing secret, the timestamp within the
 * tolerance); anything else is an `auth` failure, which the gateway answers 401.
 */
export async function verifiedEvent(
  stripe: Stripe,
  input: SignedCallback,
  signingSecret: string,
  toleranceS: number
): Promise<Stripe.Event> {
  const header = input.headers['stripe-signature'];
  if (!signingSecret || !header)
    throw new VendorFailure('auth', 'no Stripe-Signature header, or no webhook_secret configured', { status: 401 });
  try {
    return await stripe.webhooks.constructEventAsync(input.body, header, signingSecret, toleranceS);
  } catch (e) {
    throw new VendorFailure('auth', `Stripe-Signature does not verify: ${(e as Error).message}`, { status: 401 });
  }
}
