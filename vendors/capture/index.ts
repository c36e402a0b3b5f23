import { Type } from '@sinclair/typebox';
import { defineVendor, EmailMimeBuilder, type EmailRawInput, type EmailSendInput } from '../../core/kit/vendor.js';
import { CaptureStore } from './store.js';
import { CAPTURE_PRICE_MICROS } from './prices.js';

/**
 * The embedded email vendor of a laptop with no mail server configured: each message is really
 * rendered to RFC 5322 (nodemailer's composer in a worker thread, DKIM-signed when the domain has
 * a key) and kept as a file under `<data_dir>/email-capture/`, where `GET /v1/email/{id}/raw`
 * reads it. Nothing leaves the machine. A message id written twice is kept once: a retried send is a no-op.
 */
export default defineVendor({
  name: 'capture',
  embedded: true,
  standIn: true,
  regions: ['global'],
  configSchema: Type.Object(
    {
      dir: Type.String({
        default: '',
        description: 'Directory for captured messages; default <data_dir>/email-capture.',
      }),
    },
    { additionalProperties: false }
  ),
  create(config, ctx) {
    // Built in worker threads like the smtp vendor's: a laptop's gateway is no more idle while it renders.
    const builder = new EmailMimeBuilder({
      name: ctx.instanceId,
      threads: 2,
      perAccount: 2,
      maxQueuedPerAccount: 100,
      maxMemoryMb: 512,
    });
    const store = new CaptureStore(config.dir || `${ctx.dataDir}/email-capture`, builder);
    return {
      capabilities: {
        'email.send': {
          async invoke(input: EmailSendInput, opts) {
            const recipients = [...input.to, ...input.cc, ...input.bcc].map((a) => a.address);
            await store.keep(input, opts);
            return { vendor_message_id: input.message_id, accepted: recipients, rejected: [] };
          },
          price: () => CAPTURE_PRICE_MICROS,
          // Kept by Message-ID, which carries the record id: a resend after a crash keeps one copy.
          idempotencyKeys: true,
        },
        'email.raw': {
          async invoke(input: EmailRawInput) {
            return { raw: await store.read(input.message_id) };
          },
          price: () => 0,
        },
      },
      async health() {
        return { ok: true };
      },
      close: () => builder.close(),
    };
  },
});
