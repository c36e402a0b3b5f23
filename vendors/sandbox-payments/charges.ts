import {
  base62,
  VendorFailure,
  type ChargeInput,
  type ChargeLookupInput,
  type ChargeOutput,
  type RefundInput,
  type RefundOutput,
} from '../../core/kit/vendor.js';
import { outcomeOf, TEST_METHODS } from './test-methods.js';

/** What a processor remembers of a request under an idempotency key: its terms and its answer. */
interface Keyed<O> {
  terms: string;
  output: O;
  until: number;
}

/**
 * Keys a processor honours for `ttlMs`: the same key and terms answer what they answered, other
 * terms are refused (Stripe's 400 idempotency_error). Insertion order is expiry order.
 */
export class IdempotencyKeys<O> {
  private readonly keyed = new Map<string, Keyed<O>>();
  constructor(private readonly ttlMs: number) {}

  once(key: string, terms: unknown, make: () => O): O {
    const now = Date.now();
    for (const [k, o] of this.keyed) {
      if (o.until > now) break;
      this.keyed.delete(k);
    }
    const t = JSON.stringify(terms);
    const known = this.keyed.get(key);
    if (known && known.terms !== t)
      throw new VendorFailure('client_error', `idempotency key ${key} was used for a request with other terms`, {
        status: 400,
      });
    if (known) return known.output;
    const output = make();
    this.keyed.set(key, { terms: t, output, until: now + this.ttlMs });
    return output;
  }
}

/**
 * The sandbox processor's charges and refunds: a charge's outcome is its test payment method's
 * (test-methods.ts); an unknown method is refused as Stripe refuses one (400, no such
 * PaymentMethod). A delayed method's charge is pending until `settleDelayMs` after it was made
 * (the lookup computes it from the charge's time, so it survives a restart); one that needs the
 * payer is moved by the gateway's hosted authentication page.
 */
export function sandboxCharges(publicUrl: string, ttlMs: number, settleDelayMs: number) {
  const charges = new IdempotencyKeys<ChargeOutput>(ttlMs);
  const refunds = new IdempotencyKeys<RefundOutput>(ttlMs);
  const behaviour = (pm: string) => {
    const b = Object.hasOwn(TEST_METHODS, pm) ? TEST_METHODS[pm] : undefined;
    if (!b)
      throw new VendorFailure(
        'client_error',
        `No such PaymentMethod: '${pm}'. The sandbox processor takes its test payment methods (pm_card_visa…).`,
        { status: 400 }
      );
    return b;
  };
  return {
    'payments.charge': {
      async invoke(input: ChargeInput): Promise<ChargeOutput> {
        const b = behaviour(input.payment_method_id);
        const terms = [input.amount, input.currency, input.payment_method_id, input.customer_id ?? null];
        return charges.once(input.idempotency_key, terms, () => {
          const ref = `pi_sandbox_${base62(24)}`;
          return outcomeOf(b, ref, `${publicUrl}/sandbox/payments/${ref}/authenticate`);
        });
      },
      price: () => 0,
      idempotencyKeys: true,
    },
    'payments.charge.lookup': {
      async invoke(input: ChargeLookupInput): Promise<ChargeOutput> {
        const b = behaviour(input.payment_method_id);
        if (b.kind === 'delayed' && Date.now() >= input.created_at + settleDelayMs)
          return { vendor_ref: input.vendor_ref, state: 'succeeded' };
        return outcomeOf(b, input.vendor_ref, `${publicUrl}/sandbox/payments/${input.vendor_ref}/authenticate`);
      },
      price: () => 0,
    },
    'payments.refund': {
      async invoke(input: RefundInput): Promise<RefundOutput> {
        return refunds.once(input.idempotency_key, [input.vendor_ref, input.amount], () => ({
          vendor_refund_ref: `re_sandbox_${base62(24)}`,
          state: 'succeeded',
        }));
      },
      price: () => 0,
      idempotencyKeys: true,
    },
  };
}
