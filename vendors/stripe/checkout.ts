import type Stripe from 'stripe';
import type { CheckoutEvent, CheckoutInput, SignedCallback } from '../../core/kit/vendor.js';
import { verifiedEvent } from './signature.js';

// The wallet top-up at Stripe: a Checkout Session in payment mode, then its webhook events,
// each verified with the SDK's own signature check (signature.ts).

const DAY_S = 86_400;
const HALF_HOUR_S = 1800;

/** A session for one top-up: its amount in cents as one line, expiring with the top-up (within Stripe's 30 min – 24 h). */
export function sessionParams(
  input: CheckoutInput,
  successUrl: string,
  now: number
): Stripe.Checkout.SessionCreateParams {
  const nowS = Math.floor(now / 1000);
  const until = input.expires_at ? Math.floor(input.expires_at / 1000) : nowS + DAY_S;
  const back = input.return_url ?? successUrl;
  return {
    mode: 'payment',
    client_reference_id: input.topup_id,
    metadata: { topup_id: input.topup_id },
    line_items: [
      {
        quantity: 1,
        price_data: {
          currency: input.currency.toLowerCase(),
          unit_amount: Math.round(input.amount_usd * 100),
          product_data: { name: input.description },
        },
      },
    ],
    success_url: back,
    cancel_url: back,
    expires_at: Math.min(Math.max(until, nowS + HALF_HOUR_S + 60), nowS + DAY_S - 60),
  };
}

/** The checkout outcomes a verified event says; an event of another type says none. */
export async function checkoutEvents(
  stripe: Stripe,
  input: SignedCallback,
  signingSecret: string,
  toleranceS: number
): Promise<CheckoutEvent[]> {
  const event = await verifiedEvent(stripe, input, signingSecret, toleranceS);
  const state = stateOf(event);
  if (!state) return [];
  const session = event.data.object as Stripe.Checkout.Session;
  return [
    {
      event_id: event.id,
      session_id: session.id,
      state,
      ...(session.amount_total !== null && session.amount_total !== undefined
        ? { amount_total: session.amount_total }
        : {}),
      ...(session.currency ? { currency: session.currency.toUpperCase() } : {}),
    },
  ];
}

function stateOf(event: Stripe.Event): CheckoutEvent['state'] | undefined {
  switch (event.type) {
    case 'checkout.session.completed': {
      // Paid now (a card), or later (a bank debit: the async events say how it ended).
      const s = event.data.object;
      return s.payment_status === 'unpaid' ? undefined : 'succeeded';
    }
    case 'checkout.session.async_payment_succeeded':
      return 'succeeded';
    case 'checkout.session.async_payment_failed':
      return 'failed';
    case 'checkout.session.expired':
      return 'expired';
    default:
      return undefined;
  }
}
