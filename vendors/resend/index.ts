import { Type } from '@sinclair/typebox';
import {
  defineVendor,
  joinUrl,
  perRecipientMicros,
  readJson,
  recipientsOf,
  secret,
  vendorFetch,
  VendorFailure,
  type EmailSendInput,
  type EmailSendOutput,
  type EmailWebhookInput,
} from '../../core/kit/vendor.js';
import { resendEvents } from './events.js';
import { RESEND_USD_PER_RECIPIENT } from './prices.js';
import { svixKey, svixRefusal } from './svix.js';
import { resendBody, resendFailure } from './wire.js';

/**
 * Resend over its REST wire (no SDK: one JSON POST): `POST /emails` with the API key as a Bearer
 * token and the record's idempotency key as `Idempotency-Key`, which Resend honours for 24 hours,
 * so the outbox may resend a message whose answer a crash lost. Delivery, bounce and complaint
 * events come to POST /v1/email/webhooks/{instance}, signed with Svix, checked here first.
 */
export default defineVendor({
  name: 'resend',
  regions: ['global'],
  configSchema: Type.Object(
    {
      api_key: secret(Type.String({ minLength: 1, description: 'API key (re_…) with sending access.' })),
      webhook_secret: Type.Optional(
        secret(
          Type.String({
            pattern: '^whsec_[A-Za-z0-9+/=]+$',
            description: "The webhook's signing secret (whsec_…); without it every webhook is refused.",
          })
        )
      ),
      base_url: Type.String({ default: 'https://api.resend.com' }),
      price_usd_per_recipient: Type.Number({
        minimum: 0,
        default: RESEND_USD_PER_RECIPIENT,
        description: 'What one recipient of a message costs the operator (Resend counts To, Cc and Bcc each).',
      }),
    },
    { additionalProperties: false }
  ),
  create(config, ctx) {
    const url = joinUrl(config.base_url, '/emails');
    const key = config.webhook_secret ? svixKey(config.webhook_secret) : undefined;
    return {
      capabilities: {
        'email.send': {
          async invoke(input: EmailSendInput, { signal, idempotencyKey }): Promise<EmailSendOutput> {
            const headers = {
              authorization: `Bearer ${config.api_key}`,
              'content-type': 'application/json',
              accept: 'application/json',
              'idempotency-key': input.idempotency_key || idempotencyKey || input.message_id,
            };
            const body = JSON.stringify(resendBody(input));
            const res = await vendorFetch(
              ctx.fetch,
              url,
              { method: 'POST', headers, body, signal },
              'resend',
              resendFailure
            );
            const { id } = await readJson<{ id?: unknown }>(res, 'resend');
            if (typeof id !== 'string' || !id)
              throw new VendorFailure('unavailable', 'resend answered a send without an id');
            return { vendor_message_id: id, accepted: recipientsOf(input), rejected: [] };
          },
          price: (input: EmailSendInput) => perRecipientMicros(input, config.price_usd_per_recipient),
          // Resend keeps the answer to a key for 24 hours: a resend with it sends nothing again.
          idempotencyKeys: true,
        },
        'email.events': {
          async invoke(input: EmailWebhookInput) {
            if (!key) throw new VendorFailure('auth', 'resend: no webhook_secret configured, so no webhook verifies');
            const refusal = svixRefusal(key, input.headers, input.body, Date.now());
            if (refusal) throw new VendorFailure('auth', `resend: ${refusal}`);
            return resendEvents(input.body);
          },
          price: () => 0,
        },
      },
    };
  },
});
