import { Type } from '@sinclair/typebox';
import { defineVendor, base62, type CheckoutInput, type CheckoutOutput } from '../../core/kit/vendor.js';
import { IdempotencyKeys, sandboxCharges } from './charges.js';

/**
 * The embedded payments vendor. For the account area: a hosted checkout that lives on the
 * gateway itself (`/sandbox/checkout/{session}`, served by the account area), with Pay and
 * Cancel buttons and no card form. For the billing area: a processor whose test payment methods
 * behave as Stripe's test cards do (charges.ts), with its 3-D Secure page on the gateway
 * (`/sandbox/payments/{ref}/authenticate`, served by the billing area). It lets a laptop or a
 * test run the whole flow with real HTTP and no payment provider; an operator who takes real
 * money configures Stripe instead.
 *
 * Like a real provider it honours idempotency keys: the same key returns the same session,
 * charge or refund for `session_ttl_seconds`, never a second one, so a retry whose first call
 * acted unseen (a timeout) reaches what it made. The keys live in this process's memory: a
 * session opened before a restart and never recorded is simply never paid.
 */
export default defineVendor({
  name: 'sandbox-payments',
  embedded: true,
  // Never chosen beside a real payments vendor (a configured Stripe takes every payment); a
  // `vendor` pin or the operator's `routes` still reach it.
  standIn: true,
  regions: ['global'],
  configSchema: Type.Object(
    {
      session_ttl_seconds: Type.Integer({ minimum: 60, default: 86400 }),
      settle_delay_seconds: Type.Number({
        minimum: 0,
        maximum: 86400,
        default: 10,
        description: 'How long a charge with a delayed test method (pm_usBankAccount_success) stays pending.',
      }),
    },
    { additionalProperties: false }
  ),
  create(config, ctx) {
    const ttlMs = config.session_ttl_seconds * 1000;
    const sessions = new IdempotencyKeys<CheckoutOutput>(ttlMs);
    return {
      capabilities: {
        'payments.checkout': {
          async invoke(input: CheckoutInput): Promise<CheckoutOutput> {
            const terms = [input.amount_usd, input.currency, input.return_url ?? null];
            return sessions.once(input.idempotency_key, terms, () => {
              const session_id = `cs_sandbox_${base62(24)}`;
              return { session_id, checkout_url: `${ctx.publicUrl}/sandbox/checkout/${session_id}` };
            });
          },
          price: () => 0,
        },
        ...sandboxCharges(ctx.publicUrl, ttlMs, config.settle_delay_seconds * 1000),
      },
      async health() {
        return { ok: true };
      },
    };
  },
});
