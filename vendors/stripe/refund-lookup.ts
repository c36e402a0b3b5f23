import type Stripe from 'stripe';
import type { RefundInput } from '../../core/kit/vendor.js';

const PAGE = 100;

/**
 * The refund Stripe already made for the gateway's refund, if any: the PaymentIntent's refunds,
 * paged through, matched by the `metadata.refund_id` every create carries. Stripe keeps an
 * idempotency key 24 h only, so a re-send after that would make a second refund without this.
 */
export async function refundMadeFor(
  stripe: Stripe,
  input: RefundInput,
  deadline: number
): Promise<Stripe.Refund | undefined> {
  let after: string | undefined;
  for (;;) {
    const page = await stripe.refunds.list(
      { payment_intent: input.vendor_ref, limit: PAGE, ...(after ? { starting_after: after } : {}) },
      { timeout: Math.max(1, deadline - Date.now()) }
    );
    const hit = page.data.find((r) => r.metadata?.refund_id === input.refund_id);
    if (hit) return hit;
    if (!page.has_more || page.data.length === 0) return undefined;
    after = page.data[page.data.length - 1].id;
  }
}
