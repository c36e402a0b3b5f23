import { Type } from '@sinclair/typebox';
import {
  defineVendor,
  httpHealthProbe,
  joinUrl,
  secret,
  sendFailure,
  VendorFailure,
  type EmailSendInput,
  type EmailSendOutput,
  type EmailWebhookInput,
} from '../../core/kit/vendor.js';
import { checkSignature, sendgridUpdates, webhookKey } from './events.js';
import { SENDGRID_USD_PER_EMAIL, sendgridPrice } from './prices.js';
import { mailSendBody, recipientCount, sendgridFailure } from './wire.js';

/**
 * SendGrid over its v3 Mail Send wire (no SDK: one JSON POST with a Bearer API key), answered
 * 202 with the message's id in `X-Message-Id`. Its Event Webhook, signed with ECDSA, reports
 * deliveries, bounces and spam reports to POST /v1/email/webhooks/{instance} (`email.events`).
 * SendGrid takes no idempotency key, so a send whose outcome a crash lost is never resent.
 */
export default defineVendor({
  name: 'sendgrid',
  regions: ['global'],
  configSchema: Type.Object(
    {
      api_key: secret(Type.String({ minLength: 1, description: 'API key with Mail Send permission (SG.…).' })),
      base_url: Type.String({
        default: 'https://api.sendgrid.com',
        description: 'https://api.eu.sendgrid.com for an EU-pinned subuser.',
      }),
      webhook_public_key: Type.String({
        default: '',
        description:
          "The Signed Event Webhook's verification key as SendGrid shows it (base64); empty: events are refused.",
      }),
      price_usd_per_email: Type.Number({
        minimum: 0,
        default: SENDGRID_USD_PER_EMAIL,
        description: 'What one email (one recipient) costs the operator at SendGrid (before wallet.markup).',
      }),
    },
    { additionalProperties: false }
  ),
  create(config, ctx) {
    const url = joinUrl(config.base_url, '/v3/mail/send');
    const auth = `Bearer ${config.api_key}`;
    let key: ReturnType<typeof webhookKey> | undefined;
    try {
      key = config.webhook_public_key ? webhookKey(config.webhook_public_key) : undefined;
    } catch (e) {
      throw new Error(`webhook_public_key: ${(e as Error).message}`);
    }
    return {
      capabilities: {
        'email.send': {
          async invoke(input: EmailSendInput, { signal }): Promise<EmailSendOutput> {
            const body = JSON.stringify(mailSendBody(input));
            let res: Response;
            try {
              res = await ctx.fetch(url, {
                method: 'POST',
                headers: { authorization: auth, 'content-type': 'application/json' },
                body,
                signal,
              });
            } catch (e) {
              throw sendFailure(e, signal, 'sendgrid');
            }
            const text = await res.text().catch(() => '');
            if (res.status !== 202) {
              if (res.ok) throw new VendorFailure('unavailable', `sendgrid answered ${res.status}, not 202`);
              throw sendgridFailure(res.status, text, res.headers);
            }
            const id = res.headers.get('x-message-id');
            if (!id) throw new VendorFailure('unavailable', 'sendgrid accepted the message without an X-Message-Id');
            const all = [...input.to, ...input.cc, ...input.bcc].map((a) => a.address);
            return { vendor_message_id: id, accepted: all, rejected: [] };
          },
          price: (input: EmailSendInput) => sendgridPrice(config.price_usd_per_email, recipientCount(input)),
        },
        'email.events': {
          async invoke(input: EmailWebhookInput) {
            checkSignature(key, input);
            return sendgridUpdates(input.body);
          },
          price: () => 0,
        },
      },
      // GET /v3/scopes lists the key's permissions: free, authenticated, sends nothing.
      health: httpHealthProbe(
        ctx.fetch,
        joinUrl(config.base_url, '/v3/scopes'),
        () => ({ authorization: auth }),
        'sendgrid'
      ),
    };
  },
});
