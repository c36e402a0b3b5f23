import { Type } from '@sinclair/typebox';
import {
  defineVendor,
  joinUrl,
  now,
  secret,
  sendFailure,
  smsSegments,
  VendorFailure,
  type SmsCallbackInput,
  type SmsSendInput,
  type SmsSendOutput,
  type SmsStatusUpdate,
} from '../../core/kit/vendor.js';
import { VONAGE_US_SEGMENT_USD } from './prices.js';
import { freshTimestamp, SIGNATURE_METHODS, validVonageSignature, vonageSignature } from './signature.js';
import { receiptParams, vonageHttpFailure, vonageSent, vonageState, type VonageAnswer } from './wire.js';

/**
 * Vonage's SMS API over its REST wire (no SDK: one form POST to `/sms/json`), authenticated with
 * the API key and secret, or signed with the signature secret instead of the API secret. Each
 * send asks for its delivery receipt at `<public_url>/v1/sms/status/<instance>`, which
 * `sms.status` verifies (Vonage's signed webhooks) before the area applies anything.
 */
export default defineVendor({
  name: 'vonage',
  regions: ['global'],
  configSchema: Type.Object(
    {
      api_key: Type.String({ minLength: 1, description: 'API key (dashboard); receipts name it as `api-key`.' }),
      api_secret: Type.Optional(
        secret(Type.String({ minLength: 1, description: 'API secret; not needed when signature_secret is set.' }))
      ),
      signature_secret: Type.Optional(
        secret(
          Type.String({
            minLength: 1,
            description: 'Signature secret: signs each send instead of the API secret, and verifies receipts.',
          })
        )
      ),
      signature_method: Type.Union(
        SIGNATURE_METHODS.map((m) => Type.Literal(m)),
        { default: 'md5hash', description: "The account's signature method (dashboard, API settings)." }
      ),
      accept_unsigned_receipts: Type.Boolean({
        default: false,
        description:
          'Take delivery receipts without a signature when no signature_secret is set: anyone who learns '
          + 'a message id could then mark it delivered or failed.',
      }),
      receipt_max_age_seconds: Type.Integer({
        minimum: 30,
        maximum: 86_400,
        default: 300,
        description: "How far a signed receipt's timestamp may be from now, either way, before it is refused.",
      }),
      from: Type.Optional(
        Type.String({ minLength: 1, description: 'Default sender: a Vonage number (E.164) or an alphanumeric id.' })
      ),
      base_url: Type.String({ default: 'https://rest.nexmo.com' }),
      segment_price_usd: Type.Number({
        minimum: 0,
        default: VONAGE_US_SEGMENT_USD,
        description: 'What one part costs the operator (Vonage bills each part it accepted; the US rate by default).',
      }),
    },
    { additionalProperties: false }
  ),
  create(config, ctx) {
    if (!config.api_secret && !config.signature_secret)
      throw new Error(`vendor ${ctx.instanceId}: vonage needs an api_secret or a signature_secret`);
    const url = joinUrl(config.base_url, '/sms/json');
    const segmentMicros = Math.round(config.segment_price_usd * 1_000_000);
    const method = config.signature_method;
    return {
      capabilities: {
        'sms.send': {
          async invoke(input: SmsSendInput, { signal }): Promise<SmsSendOutput> {
            const from = input.from ?? config.from;
            if (!from) throw new VendorFailure('client_error', 'vonage: no from given and none configured');
            // Vonage writes numbers in E.164 without the '+'.
            const params: Record<string, string> = {
              api_key: config.api_key,
              from: from.replace(/^\+(?=\d+$)/, ''),
              to: input.to.replace(/^\+/, ''),
              text: input.body,
              'client-ref': input.idempotency_key,
            };
            if (smsSegments(input.body).encoding === 'UCS-2') params.type = 'unicode';
            if (input.status_callback_url) params.callback = `${input.status_callback_url}/${ctx.instanceId}`;
            if (config.signature_secret) {
              params.timestamp = String(Math.floor(now() / 1000));
              params.sig = vonageSignature(method, config.signature_secret, params);
            } else params.api_secret = config.api_secret!;
            let res: Response;
            try {
              res = await ctx.fetch(url, {
                method: 'POST',
                headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
                body: new URLSearchParams(params).toString(),
                signal,
              });
            } catch (e) {
              throw sendFailure(e, signal, 'vonage');
            }
            const text = await res.text().catch(() => '');
            if (!res.ok) throw vonageHttpFailure(res.status, text, res.headers.get('retry-after'));
            let answer: VonageAnswer;
            try {
              answer = JSON.parse(text) as VonageAnswer;
            } catch {
              throw new VendorFailure('unavailable', 'vonage answered a send with a body that is not JSON');
            }
            return vonageSent(answer);
          },
          price: (input: SmsSendInput, output?: SmsSendOutput) =>
            (output?.segments ?? smsSegments(input.body).segments) * segmentMicros,
        },
        'sms.status': {
          async invoke(input: SmsCallbackInput): Promise<SmsStatusUpdate | null> {
            const params = receiptParams(input.url, input.headers, input.body);
            if (config.signature_secret) {
              if (!validVonageSignature(method, config.signature_secret, params))
                throw new VendorFailure('auth', 'vonage: the delivery receipt carries no valid sig');
              if (!freshTimestamp(params.timestamp, config.receipt_max_age_seconds, now()))
                throw new VendorFailure('auth', 'vonage: the delivery receipt is signed too far from now (replayed?)');
            } else if (!config.accept_unsigned_receipts)
              throw new VendorFailure('auth', 'vonage: unsigned delivery receipts are refused (no signature_secret)');
            if (params['api-key'] !== config.api_key) return null;
            // A long message gets a receipt a part; the record knows the first part's id.
            const id = params.messageId;
            const state = vonageState(params.status ?? '');
            if (!id || !state) return null;
            const code = params['err-code'];
            return { vendor_message_id: id, state, ...(code && code !== '0' ? { error_code: code } : {}) };
          },
          price: () => 0,
        },
      },
    };
  },
});
