import { Type } from '@sinclair/typebox';
import { defineVendor } from '../../core/define.js';
import { base62 } from '../../core/ids.js';
import type { CheckoutInput, CheckoutOutput } from '../../core/capabilities/payments.js';

/**
 * The embedded payments vendor: a hosted checkout that lives on the gateway itself
 * (`/sandbox/checkout/{session}`, served by the account area), with Pay and Cancel buttons
 * and no card form. It lets a laptop or a test run the whole top-up flow with real HTTP
 * and no payment provider; an operator who takes real money configures Stripe instead.
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
  create(_config, ctx) {
    return {
      capabilities: {
        'payments.checkout': {
          async invoke(_input: CheckoutInput): Promise<CheckoutOutput> {
            const session_id = `cs_sandbox_${base62(24)}`;
            return { session_id, checkout_url: `${ctx.publicUrl}/sandbox/checkout/${session_id}` };
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
