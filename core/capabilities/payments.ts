import { capabilities, capability } from './capability.js';

// The payments contracts: a hosted checkout the account area opens for a wallet top-up.

export interface CheckoutInput {
  topup_id: string;
  /**
   * The vendor's idempotency key (the top-up id): the same key must return the same checkout,
   * never open a second one, so a retry after a timeout or 5xx at which the vendor may have
   * acted unseen reaches the checkout it opened (Stripe's `Idempotency-Key`).
   */
  idempotency_key: string;
  amount_usd: number;
  currency: string;
  description: string;
  return_url?: string;
  /** When the gateway stops accepting payment for this top-up (epoch ms). */
  expires_at?: number;
}

export interface CheckoutOutput {
  session_id: string;
  checkout_url: string;
}

export const PAYMENTS_CAPABILITIES = capabilities({
  // Not idempotent: the router never opens a second session at another vendor.
  'payments.checkout': capability<CheckoutInput, CheckoutOutput>({
    idempotent: false,
    description: 'Create a hosted checkout session for a wallet top-up.',
  }),
});
