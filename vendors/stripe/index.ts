import { Type } from '@sinclair/typebox';
import type Stripe from 'stripe';
import {
  defineVendor,
  secret,
  type ChargeInput,
  type ChargeLookupInput,
  type ChargeOutput,
  type CheckoutInput,
  type CheckoutOutput,
  type RefundInput,
  type RefundOutput,
  type SignedCallback,
  type CheckoutEvent,
  type PaymentEvent,
} from '../../core/kit/vendor.js';
import { checkoutEvents, sessionParams } from './checkout.js';
import { paymentEvents } from './payment-events.js';
import { refundMadeFor } from './refund-lookup.js';
import { chargeOf, checkStripeAmount, classifyStripe, declinedCharge, refundOf, stripeFailure } from './wire.js';

/**
 * Stripe through its official SDK (`stripe`, loaded on first use), pointed at `base_url`'s
 * host, port and protocol, its requests made with the core's egress-guarded fetch. Charges are
 * PaymentIntents created and confirmed at once with the saved payment method; refunds are
 * Refunds of the PaymentIntent; the wallet top-up is a Checkout Session whose
 * `checkout.session.completed` webhook is verified with the SDK's own signature check. Every
 * create passes the gateway's id as Stripe's `Idempotency-Key`, so a retry after an answer was
 * lost reaches the payment Stripe made, never a second one. The SDK's own retries are off: the
 * router decides.
 */
export default defineVendor({
  name: 'stripe',
  regions: ['global'],
  configSchema: Type.Object(
    {
      secret_key: secret(
        Type.String({ minLength: 1, description: 'sk_live_… or sk_test_… (a restricted rk_ key works).' })
      ),
      webhook_secret: secret(
        Type.String({
          default: '',
          description: "The webhook endpoint's signing secret (whsec_…); empty: webhooks refused.",
        })
      ),
      billing_webhook_secret: secret(
        Type.String({
          default: '',
          description: "The billing webhook endpoint's signing secret (whsec_…); empty: its events refused.",
        })
      ),
      base_url: Type.String({ default: 'https://api.stripe.com', pattern: '^https?://' }),
      webhook_tolerance_seconds: Type.Integer({ minimum: 1, maximum: 3600, default: 300 }),
      success_url: Type.String({
        default: '',
        description:
          'Where Checkout sends the payer after paying a top-up that named no return_url; empty: the gateway.',
      }),
    },
    { additionalProperties: false }
  ),
  create(config, ctx) {
    const base = new URL(config.base_url);
    let client: Promise<Stripe> | undefined;
    const stripe = () =>
      (client ??= import('stripe').then(
        ({ default: StripeSdk }) =>
          new StripeSdk(config.secret_key, {
            host: base.hostname,
            port: base.port || (base.protocol === 'https:' ? 443 : 80),
            protocol: base.protocol === 'https:' ? 'https' : 'http',
            maxNetworkRetries: 0,
            telemetry: false,
            httpClient: StripeSdk.createFetchHttpClient(ctx.fetch),
          })
      ));
    const call = async <T>(fn: (s: Stripe) => Promise<T>): Promise<T> => {
      try {
        return await fn(await stripe());
      } catch (e) {
        throw stripeFailure(e);
      }
    };
    const opts = (key: string, signal: AbortSignal, deadline: number) => ({
      idempotencyKey: key,
      timeout: Math.max(1, deadline - Date.now()),
      signal,
    });
    return {
      capabilities: {
        'payments.charge': {
          async invoke(input: ChargeInput, o): Promise<ChargeOutput> {
            checkStripeAmount(input.amount, input.currency);
            try {
              const pi = await (await stripe()).paymentIntents.create(
                {
                  amount: input.amount,
                  currency: input.currency.toLowerCase(),
                  payment_method: input.payment_method_id,
                  ...(input.customer_id ? { customer: input.customer_id } : {}),
                  confirm: true,
                  return_url: input.return_url,
                  description: input.description,
                  metadata: { charge_id: input.charge_id },
                },
                opts(input.idempotency_key, o.signal, o.deadline)
              );
              return chargeOf(pi);
            } catch (e) {
              const declined = declinedCharge(e, input.charge_id);
              if (declined) return declined;
              throw stripeFailure(e);
            }
          },
          price: () => 0,
          idempotencyKeys: true,
        },
        'payments.charge.lookup': {
          async invoke(input: ChargeLookupInput, o): Promise<ChargeOutput> {
            return call(async (s) =>
              chargeOf(
                await s.paymentIntents.retrieve(input.vendor_ref, {}, { timeout: Math.max(1, o.deadline - Date.now()) })
              )
            );
          },
          price: () => 0,
        },
        'payments.refund': {
          async invoke(input: RefundInput, o): Promise<RefundOutput> {
            // A re-send may come after Stripe forgot the key (24 h): the refund made then is found first.
            const made = input.resend ? await call((s) => refundMadeFor(s, input, o.deadline)) : undefined;
            const r =
              made
              ?? (await call((s) =>
                s.refunds.create(
                  { payment_intent: input.vendor_ref, amount: input.amount, metadata: { refund_id: input.refund_id } },
                  opts(input.idempotency_key, o.signal, o.deadline)
                )
              ));
            return refundOf(r);
          },
          price: () => 0,
          idempotencyKeys: true,
        },
        'payments.checkout': {
          async invoke(input: CheckoutInput, o): Promise<CheckoutOutput> {
            const success = config.success_url || `${ctx.publicUrl}/v1/account/topups/${input.topup_id}`;
            const session = await call((s) =>
              s.checkout.sessions.create(
                sessionParams(input, success, Date.now()),
                opts(input.idempotency_key, o.signal, o.deadline)
              )
            );
            if (!session.url)
              throw stripeFailure({ type: 'StripeAPIError', statusCode: 502, message: 'no session url' });
            return { session_id: session.id, checkout_url: session.url };
          },
          price: () => 0,
          idempotencyKeys: true,
        },
        'payments.checkout.events': {
          async invoke(input: SignedCallback): Promise<CheckoutEvent[]> {
            return checkoutEvents(await stripe(), input, config.webhook_secret, config.webhook_tolerance_seconds);
          },
          price: () => 0,
        },
        'payments.charge.events': {
          async invoke(input: SignedCallback): Promise<PaymentEvent[]> {
            return paymentEvents(
              await stripe(),
              input,
              config.billing_webhook_secret,
              config.webhook_tolerance_seconds
            );
          },
          price: () => 0,
        },
      },
      classify: classifyStripe,
      async health() {
        try {
          await (await stripe()).balance.retrieve({}, { timeout: 10_000 });
          return { ok: true };
        } catch (e) {
          return { ok: false, error: (stripeFailure(e) as Error).message };
        }
      },
    };
  },
});
