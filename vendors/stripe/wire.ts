import type Stripe from 'stripe';
import {
  kindFromStatus,
  notSentCode,
  VendorFailure,
  type ChargeOutput,
  type FailureKind,
  type RefundOutput,
} from '../../core/kit/vendor.js';

// Stripe's wire as the adapter reads it: a PaymentIntent's status as a Charge state, a card
// error as a declined charge (an answer, not a failure), any other error as a failure kind.

const THREE_DECIMALS = new Set(['BHD', 'JOD', 'KWD', 'OMR', 'TND']);

/**
 * Stripe counts amounts in the same smallest units as ISO 4217, but takes the five
 * three-decimal currencies it supports only in multiples of 10 (its rule, not ISO's): refused
 * here with the reason rather than sent for Stripe's less specific refusal.
 */
export function checkStripeAmount(amount: number, currency: string): void {
  if (THREE_DECIMALS.has(currency) && amount % 10 !== 0)
    throw new VendorFailure(
      'client_error',
      `Stripe takes ${currency} amounts in multiples of 10 (its smallest unit is 0.010); ${amount} is not one.`,
      { status: 400 }
    );
}

/** A PaymentIntent as a charge's outcome. */
export function chargeOf(pi: Stripe.PaymentIntent): ChargeOutput {
  const ref = pi.id;
  switch (pi.status) {
    case 'succeeded':
      return { vendor_ref: ref, state: 'succeeded' };
    case 'processing':
    case 'requires_capture':
      return { vendor_ref: ref, state: 'pending' };
    case 'requires_action': {
      const url = pi.next_action?.redirect_to_url?.url;
      return { vendor_ref: ref, state: 'requires_action', ...(url ? { next_action_url: url } : {}) };
    }
    case 'requires_confirmation':
      return { vendor_ref: ref, state: 'pending' };
    default: {
      // requires_payment_method after a failed attempt, or canceled.
      const e = pi.last_payment_error;
      return {
        vendor_ref: ref,
        state: 'failed',
        failure_code: e?.code ?? (pi.status === 'canceled' ? 'canceled' : 'payment_failed'),
        ...(e?.decline_code ? { decline_code: e.decline_code } : {}),
        failure_message: e?.message ?? `The payment is ${pi.status}.`,
      };
    }
  }
}

/** A card error (a decline) as the failed charge it is; undefined for any other error. */
export function declinedCharge(err: unknown, chargeId: string): ChargeOutput | undefined {
  const e = err as Partial<Stripe.errors.StripeCardError> & { raw?: { payment_intent?: { id?: string } } };
  if (e?.type !== 'StripeCardError') return undefined;
  return {
    vendor_ref: e.raw?.payment_intent?.id ?? `declined_${chargeId}`,
    state: 'failed',
    failure_code: e.code ?? 'card_declined',
    ...(e.decline_code ? { decline_code: e.decline_code } : {}),
    failure_message: e.message ?? 'The card was declined.',
  };
}

/** A Stripe SDK error's failure kind. */
export function classifyStripe(err: unknown): FailureKind | undefined {
  const e = err as { type?: string; statusCode?: number; detail?: unknown } | null;
  if (!e?.type?.startsWith('Stripe')) return undefined;
  if (e.type === 'StripeConnectionError') return notSentCode(e.detail) ? 'not_sent' : 'unavailable';
  if (e.type === 'StripeIdempotencyError') return 'client_error';
  return typeof e.statusCode === 'number' ? kindFromStatus(e.statusCode) : 'unavailable';
}

/** Any Stripe error as a VendorFailure whose message says Stripe's code and words (never the key). */
export function stripeFailure(err: unknown): unknown {
  const kind = classifyStripe(err);
  if (!kind) return err;
  const e = err as { code?: string; message?: string; statusCode?: number };
  const text = `${e.code ? `${e.code}: ` : ''}${e.message ?? 'Stripe failed'}`;
  return new VendorFailure(kind, text, { status: e.statusCode, cause: err });
}

/** A Refund as the refund's outcome. */
export function refundOf(r: Stripe.Refund): RefundOutput {
  const state =
    r.status === 'succeeded' ? 'succeeded' : r.status === 'failed' || r.status === 'canceled' ? 'failed' : 'pending';
  return { vendor_refund_ref: r.id, state, ...(r.failure_reason ? { failure_code: r.failure_reason } : {}) };
}
