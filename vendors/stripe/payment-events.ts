import type Stripe from 'stripe';
import type { PaymentEvent, SignedCallback } from '../../core/kit/vendor.js';
import { verifiedEvent } from './signature.js';
import { chargeOf, refundOf } from './wire.js';

// The billing area's webhook at Stripe: a PaymentIntent's moves (`payment_intent.*`) and a
// refund's (`refund.*`, `charge.refunded`), verified like the top-up's (signature.ts). Events of
// other types say nothing; the area applies each move once.

const INTENT_EVENTS = new Set([
  'payment_intent.succeeded',
  'payment_intent.payment_failed',
  'payment_intent.canceled',
  'payment_intent.processing',
  'payment_intent.requires_action',
]);
const REFUND_EVENTS = new Set(['refund.created', 'refund.updated', 'refund.failed']);

/** The moves a verified event says. */
export async function paymentEvents(
  stripe: Stripe,
  input: SignedCallback,
  signingSecret: string,
  toleranceS: number
): Promise<PaymentEvent[]> {
  const event = await verifiedEvent(stripe, input, signingSecret, toleranceS);
  if (INTENT_EVENTS.has(event.type)) {
    const pi = event.data.object as Stripe.PaymentIntent;
    return [
      { event_id: event.id, charge: { ...chargeOf(pi), amount: pi.amount, currency: pi.currency.toUpperCase() } },
    ];
  }
  const refunds: Stripe.Refund[] = REFUND_EVENTS.has(event.type)
    ? [event.data.object as Stripe.Refund]
    : event.type === 'charge.refunded'
      ? ((event.data.object as Stripe.Charge).refunds?.data ?? [])
      : [];
  return refunds.flatMap((r) => {
    const pi = typeof r.payment_intent === 'string' ? r.payment_intent : r.payment_intent?.id;
    if (!pi) return [];
    const ours = r.metadata?.refund_id;
    // One event may carry several refunds: each is its own move, under an id of its own.
    const id = refunds.length > 1 ? `${event.id}:${r.id}` : event.id;
    return [{ event_id: id, refund: { ...refundOf(r), vendor_ref: pi, ...(ours ? { refund_id: ours } : {}) } }];
  });
}
