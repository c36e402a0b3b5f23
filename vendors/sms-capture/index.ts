import { Type } from '@sinclair/typebox';
import {
  defineVendor,
  smsSegments,
  type SmsCaptureReadInput,
  type SmsSendInput,
  type SmsSendOutput,
} from '../../core/kit/vendor.js';
import { SmsCaptureStore } from './store.js';
import { CAPTURE_SEGMENT_MICROS } from './prices.js';

/**
 * The embedded SMS vendor of a laptop with no SMS provider configured: each message is kept as
 * a JSON file under `<data_dir>/sms-capture/`, named by the gateway's message id, where
 * `GET /v1/sms/{id}/captured` reads it. Nothing leaves the machine; the record says `captured`.
 * A message id written twice is kept once, so a retried send is a no-op.
 */
export default defineVendor({
  name: 'sms-capture',
  embedded: true,
  standIn: true,
  regions: ['global'],
  configSchema: Type.Object(
    {
      dir: Type.String({
        default: '',
        description: 'Directory for captured messages; default <data_dir>/sms-capture.',
      }),
    },
    { additionalProperties: false }
  ),
  create(config, ctx) {
    const store = new SmsCaptureStore(config.dir || `${ctx.dataDir}/sms-capture`);
    return {
      capabilities: {
        'sms.send': {
          async invoke(input: SmsSendInput): Promise<SmsSendOutput> {
            const { segments } = smsSegments(input.body);
            const kept = await store.keep({
              id: input.idempotency_key,
              to: input.to,
              from: input.from ?? null,
              body: input.body,
              segments,
            });
            return { vendor_message_id: kept.id, segments: kept.segments };
          },
          // Kept by the message id: a resend after a crash finds the file and writes nothing.
          idempotencyKeys: true,
          price: (input: SmsSendInput, output?: SmsSendOutput) =>
            (output?.segments ?? smsSegments(input.body).segments) * CAPTURE_SEGMENT_MICROS,
        },
        'sms.capture.read': {
          invoke: (input: SmsCaptureReadInput) => store.read(input.idempotency_key),
          price: () => 0,
        },
      },
      async health() {
        return { ok: true };
      },
    };
  },
});
