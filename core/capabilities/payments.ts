import { capabilities, capability } from './capability.js';

// The payments contracts: a hosted checkout the account area opens for a wallet top-up, and the
// billing area's charges and refunds of the caller's end customers.

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

/** A checkout's outcome as its vendor signed it (`payments.checkout.events`, a webhook). */
export interface CheckoutEvent {
  /** The vendor's event id: the same event delivered twice has the same id. */
  event_id: string;
  session_id: string;
  state: 'succeeded' | 'failed' | 'expired' | 'canceled';
  /** What the vendor says was paid, in the currency's smallest unit (checked against the top-up). */
  amount_total?: number;
  currency?: string;
}

/** A vendor callback as the gateway received it: signatures cover these exact bytes. */
export interface SignedCallback {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** Where a charge is: the Charge states before any refund. */
export type ChargeState = 'pending' | 'requires_action' | 'succeeded' | 'failed';

export interface ChargeInput {
  charge_id: string;
  /** The vendor's idempotency key (the charge id): a retried charge never charges twice at the vendor. */
  idempotency_key: string;
  /** In the currency's smallest unit (ISO 4217 exponent: JPY 0, USD 2, KWD 3). */
  amount: number;
  /** ISO 4217, upper case. */
  currency: string;
  customer_id?: string;
  payment_method_id: string;
  description: string;
  /** Where a payer who had to authenticate (3-D Secure) is sent back to. */
  return_url: string;
}

export interface ChargeOutput {
  /** The vendor's own id of the payment (a PaymentIntent id). */
  vendor_ref: string;
  state: ChargeState;
  /** While `requires_action`: the hosted page where the payer authenticates. */
  next_action_url?: string;
  /** When `failed`: the vendor's code (`card_declined`, `expired_card`…) and its decline code. */
  failure_code?: string;
  decline_code?: string;
  failure_message?: string;
}

/** The payment as the vendor sees it now, for a charge still `pending` or `requires_action`. */
export interface ChargeLookupInput {
  charge_id: string;
  vendor_ref: string;
  payment_method_id: string;
  /** When the charge was made (epoch ms). */
  created_at: number;
}

export interface RefundInput {
  refund_id: string;
  /** The vendor's idempotency key (the refund id). */
  idempotency_key: string;
  charge_id: string;
  vendor_ref: string;
  /** In the charge's smallest unit; never more than what is left of the charge (the area checks). */
  amount: number;
  currency: string;
  /**
   * The refund was sent before (its answer was not heard): the vendor's idempotency key may have
   * expired since (Stripe keeps keys 24 h), so the adapter finds a refund it made first.
   */
  resend?: boolean;
}

export interface RefundOutput {
  vendor_refund_ref: string;
  state: 'pending' | 'succeeded' | 'failed';
  failure_code?: string;
}

/**
 * A charge's or a refund's move as its vendor signed it (`payments.charge.events`, a webhook).
 * Exactly one of `charge` and `refund` is set.
 */
export interface PaymentEvent {
  /** The vendor's event id: the same event delivered twice has the same id. */
  event_id: string;
  /** The payment now (`vendor_ref` names it), with what the vendor says it is for. */
  charge?: ChargeOutput & { amount?: number; currency?: string };
  /** A refund now: `vendor_ref` is its payment, `refund_id` the gateway's id when the vendor kept it. */
  refund?: RefundOutput & { vendor_ref: string; refund_id?: string };
}

export const PAYMENTS_CAPABILITIES = capabilities({
  // Not idempotent: the router never opens a second session at another vendor.
  'payments.checkout': capability<CheckoutInput, CheckoutOutput>({
    idempotent: false,
    description: 'Create a hosted checkout session for a wallet top-up.',
  }),
  'payments.checkout.events': capability<SignedCallback, CheckoutEvent[]>({
    idempotent: false,
    description: "Verify and read a payments vendor's signed checkout webhook.",
  }),
});

/** The billing area's: a charge that may have happened at one vendor is never tried at another. */
export const BILLING_CAPABILITIES = capabilities({
  'payments.charge': capability<ChargeInput, ChargeOutput>({
    idempotent: false,
    description: "Charge an end customer's saved payment method.",
  }),
  'payments.charge.lookup': capability<ChargeLookupInput, ChargeOutput>({
    idempotent: true,
    description: 'The current state of a charge that was pending or awaited the payer.',
  }),
  'payments.refund': capability<RefundInput, RefundOutput>({
    idempotent: false,
    description: 'Refund all or part of a charge.',
  }),
  'payments.charge.events': capability<SignedCallback, PaymentEvent[]>({
    idempotent: false,
    description: "Verify and read a payments vendor's signed payment and refund webhook.",
  }),
});
