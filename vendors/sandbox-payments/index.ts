import { Type } from '@sinclair/typebox';
import { defineVendor, base62, VendorFailure, type CheckoutInput, type CheckoutOutput } from '../../core/kit/vendor.js';

/** A checkout opened under an idempotency key, remembered as a payments provider remembers keys. */
interface Opened {
  terms: string;
  output: CheckoutOutput;
  until: number;
}

/**
 * The embedded payments vendor: a hosted checkout that lives on the gateway itself
 * (`/sandbox/checkout/{session}`, served by the account area), with Pay and Cancel buttons
 * and no card form. It lets a laptop or a test run the whole top-up flow with real HTTP
 * and no payment provider; an operator who takes real money configures Stripe instead.
 *
 * Like a real provider it honours the checkout's idempotency key: the same key returns the same
 * session for `session_ttl_seconds`, never a second one, so a retried top-up whose first call
 * opened a session unseen (a timeout) reaches that session. The keys live in this process's
 * memory: a session opened before a restart and never recorded is simply never paid.
 */
export default defineVendor({
  name: 'sandbox-payments',
  embedded: true,
  regions: ['global'],
  configSchema: Type.Object(
    {
      session_ttl_seconds: Type.Integer({ minimum: 60, default: 86400 }),
    },
    { additionalProperties: false }
  ),
  create(config, ctx) {
    const ttlMs = config.session_ttl_seconds * 1000;
    // Insertion order is expiry order (one TTL for all): the oldest are dropped from the front.
    const opened = new Map<string, Opened>();
    return {
      capabilities: {
        'payments.checkout': {
          async invoke(input: CheckoutInput): Promise<CheckoutOutput> {
            const now = Date.now();
            for (const [key, o] of opened) {
              if (o.until > now) break;
              opened.delete(key);
            }
            const terms = JSON.stringify([input.amount_usd, input.currency, input.return_url ?? null]);
            const known = opened.get(input.idempotency_key);
            if (known && known.terms !== terms)
              throw new VendorFailure(
                'client_error',
                `idempotency key ${input.idempotency_key} was used for a checkout with other terms`,
                { status: 400 }
              );
            if (known) return known.output;
            const session_id = `cs_sandbox_${base62(24)}`;
            const output = { session_id, checkout_url: `${ctx.publicUrl}/sandbox/checkout/${session_id}` };
            opened.set(input.idempotency_key, { terms, output, until: now + ttlMs });
            return output;
          },
          price: () => 0,
        },
      },
      async health() {
        return { ok: true };
      },
    };
  },
});
