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
import { basicAuthMatches, postmarkEvents } from './events.js';
import { POSTMARK_USD_PER_RECIPIENT } from './prices.js';
import { postmarkBody, postmarkFailure } from './wire.js';

/**
 * Postmark over its REST wire (no SDK: one JSON POST): `POST /email` with the server token in
 * X-Postmark-Server-Token, on the configured message stream. Postmark takes no idempotency key,
 * so a send whose answer a crash lost is never resent (the record fails as outcome_unknown).
 * Delivery, bounce and spam-complaint webhooks come to POST /v1/email/webhooks/{instance} with
 * the Basic credentials configured here, which is all Postmark offers to authenticate them.
 */
export default defineVendor({
  name: 'postmark',
  regions: ['global'],
  configSchema: Type.Object(
    {
      server_token: secret(Type.String({ minLength: 1, description: "The Postmark server's API token." })),
      message_stream: Type.String({
        minLength: 1,
        default: 'outbound',
        description: 'The transactional message stream messages go out on.',
      }),
      webhook_username: Type.Optional(
        Type.String({ minLength: 1, pattern: '^[^:]+$', description: "User in the webhook URL's credentials." })
      ),
      webhook_password: Type.Optional(
        secret(Type.String({ minLength: 16, description: "Password in the webhook URL's credentials." }))
      ),
      base_url: Type.String({ default: 'https://api.postmarkapp.com' }),
      price_usd_per_recipient: Type.Number({
        minimum: 0,
        default: POSTMARK_USD_PER_RECIPIENT,
        description: 'What one recipient of a message costs the operator (Postmark counts To, Cc and Bcc each).',
      }),
    },
    { additionalProperties: false }
  ),
  create(config, ctx) {
    const url = joinUrl(config.base_url, '/email');
    const { webhook_username: user, webhook_password: password } = config;
    return {
      capabilities: {
        'email.send': {
          async invoke(input: EmailSendInput, { signal }): Promise<EmailSendOutput> {
            const headers = {
              'x-postmark-server-token': config.server_token,
              'content-type': 'application/json',
              accept: 'application/json',
            };
            const body = JSON.stringify(postmarkBody(input, config.message_stream));
            const init = { method: 'POST', headers, body, signal };
            const res = await vendorFetch(ctx.fetch, url, init, 'postmark', postmarkFailure);
            const answer = await readJson<{ MessageID?: unknown; ErrorCode?: unknown }>(res, 'postmark');
            // A 200 names its ErrorCode too; anything but 0 is a refusal.
            if (answer.ErrorCode !== undefined && answer.ErrorCode !== 0)
              throw postmarkFailure(422, JSON.stringify(answer), null);
            if (typeof answer.MessageID !== 'string' || !answer.MessageID)
              throw new VendorFailure('unavailable', 'postmark answered a send without a MessageID');
            return { vendor_message_id: answer.MessageID, accepted: recipientsOf(input), rejected: [] };
          },
          price: (input: EmailSendInput) => perRecipientMicros(input, config.price_usd_per_recipient),
        },
        'email.events': {
          async invoke(input: EmailWebhookInput) {
            if (!user || !password)
              throw new VendorFailure(
                'auth',
                'postmark: no webhook_username and webhook_password configured, so no webhook verifies'
              );
            if (!basicAuthMatches(input.headers.authorization, user, password))
              throw new VendorFailure('auth', 'postmark: the webhook carries no matching Basic credentials');
            return postmarkEvents(input.body);
          },
          price: () => 0,
        },
      },
    };
  },
});
