import { Type } from '@sinclair/typebox';
import {
  defineVendor,
  joinUrl,
  secret,
  sendFailure,
  smsSegments,
  VendorFailure,
  type SmsCallbackInput,
  type SmsFindInput,
  type SmsSendInput,
  type SmsSendOutput,
  type SmsStatusUpdate,
} from '../../core/kit/vendor.js';
import { TWILIO_US_SEGMENT_USD } from './prices.js';
import { twilioFailure, twilioState, validTwilioSignature, type TwilioMessage } from './wire.js';
import { findSent, sendOutput, type TwilioHttp } from './find.js';

/**
 * Twilio Programmable Messaging over its REST wire (no SDK: one form POST): a message is
 * created with `POST /2010-04-01/Accounts/{sid}/Messages.json`, Basic auth with the account
 * SID and auth token, and a `StatusCallback` Twilio posts each status change to, signed with
 * X-Twilio-Signature, which `sms.status` checks before the area applies anything. Twilio takes
 * no idempotency key; `sms.find` reads its message list instead, after a crash (find.ts).
 */
export default defineVendor({
  name: 'twilio',
  regions: ['global'],
  configSchema: Type.Object(
    {
      account_sid: Type.String({ pattern: '^AC[0-9a-fA-F]{32}$', description: 'Account SID (AC…).' }),
      auth_token: secret(Type.String({ minLength: 1, description: 'Auth token: Basic auth and callback signatures.' })),
      from: Type.Optional(
        Type.String({ minLength: 1, description: 'Default sender: a Twilio number (E.164) or sender id.' })
      ),
      messaging_service_sid: Type.Optional(
        Type.String({
          pattern: '^MG[0-9a-fA-F]{32}$',
          description: 'Send through a Messaging Service (MG…) when no from is given.',
        })
      ),
      base_url: Type.String({ default: 'https://api.twilio.com' }),
      segment_price_usd: Type.Number({
        minimum: 0,
        default: TWILIO_US_SEGMENT_USD,
        description: 'What one segment costs the operator (Twilio bills per segment; the US rate by default).',
      }),
    },
    { additionalProperties: false }
  ),
  create(config, ctx) {
    const url = joinUrl(config.base_url, `/2010-04-01/Accounts/${config.account_sid}/Messages.json`);
    const auth = `Basic ${Buffer.from(`${config.account_sid}:${config.auth_token}`).toString('base64')}`;
    const segmentMicros = Math.round(config.segment_price_usd * 1_000_000);
    const http: TwilioHttp = {
      url,
      baseUrl: config.base_url,
      authorization: auth,
      fetch: ctx.fetch,
      ...(config.from ? { from: config.from } : {}),
    };
    return {
      capabilities: {
        'sms.send': {
          async invoke(input: SmsSendInput, { signal }): Promise<SmsSendOutput> {
            const form = new URLSearchParams({ To: input.to, Body: input.body });
            const from = input.from ?? config.from;
            if (from) form.set('From', from);
            else if (config.messaging_service_sid) form.set('MessagingServiceSid', config.messaging_service_sid);
            else
              throw new VendorFailure(
                'client_error',
                'twilio: no from given and no from or messaging_service_sid configured'
              );
            if (input.status_callback_url) form.set('StatusCallback', `${input.status_callback_url}/${ctx.instanceId}`);
            let res: Response;
            try {
              res = await ctx.fetch(url, {
                method: 'POST',
                headers: {
                  authorization: auth,
                  'content-type': 'application/x-www-form-urlencoded',
                  accept: 'application/json',
                },
                body: form.toString(),
                signal,
              });
            } catch (e) {
              throw sendFailure(e, signal, 'twilio');
            }
            const text = await res.text().catch(() => '');
            if (!res.ok) throw twilioFailure(res.status, text, res.headers.get('retry-after'));
            let msg: TwilioMessage;
            try {
              msg = JSON.parse(text) as TwilioMessage;
            } catch {
              throw new VendorFailure('unavailable', 'twilio answered a send with a body that is not JSON');
            }
            if (typeof msg.sid !== 'string')
              throw new VendorFailure('unavailable', 'twilio answered a send without a sid');
            return sendOutput(msg, input.body);
          },
          price: (input: SmsSendInput, output?: SmsSendOutput) =>
            (output?.segments ?? smsSegments(input.body).segments) * segmentMicros,
        },
        'sms.find': {
          invoke: (input: SmsFindInput, { signal }): Promise<SmsSendOutput | null> => findSent(http, input, signal),
          price: () => 0,
        },
        'sms.status': {
          async invoke(input: SmsCallbackInput): Promise<SmsStatusUpdate | null> {
            const params = new URLSearchParams(input.body);
            const signature = input.headers['x-twilio-signature'] ?? '';
            if (!validTwilioSignature(config.auth_token, input.url, params, signature))
              throw new VendorFailure('auth', 'twilio: the status callback carries no valid X-Twilio-Signature');
            if (params.get('AccountSid') !== config.account_sid) return null;
            const sid = params.get('MessageSid') ?? params.get('SmsSid');
            const state = twilioState(params.get('MessageStatus') ?? params.get('SmsStatus') ?? '');
            if (!sid || !state) return null;
            const code = params.get('ErrorCode');
            return { vendor_message_id: sid, state, ...(code ? { error_code: code } : {}) };
          },
          price: () => 0,
        },
      },
    };
  },
});
