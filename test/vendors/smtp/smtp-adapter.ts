// The smtp adapter made the way the gateway makes it, for the tests of this folder: its config
// defaulted from the schema, its connections through a local egress proxy, closed at teardown.
import { Value } from '@sinclair/typebox/value';
import { CoreConfigSchema } from '../../../config/schema.js';
import { Egress } from '../../../core/egress/egress.js';
import smtp from '../../../vendors/smtp/index.js';
import type { EmailSendInput } from '../../../core/capabilities/email.js';
import { vendorContext } from '../../helpers/vendor-context.js';
import type { Tap } from '../../helpers/tap.js';

function context(t: Tap, allowPrivate: boolean) {
  const egress = new Egress({
    ...(Value.Default(CoreConfigSchema.properties.egress, {}) as any),
    allow_private: allowPrivate,
  });
  t.teardown(() => egress.close());
  return { ...vendorContext('mail'), egressProxy: () => egress.proxyUrl() };
}

/** An adapter instance named `mail` (its MIME workers are `mail MIME`). */
export async function adapter(t: Tap, config: Record<string, unknown>, allowPrivate = true) {
  const cfg = Value.Default(smtp.configSchema, { ...config }) as any;
  const inst = await smtp.create(cfg, context(t, allowPrivate));
  t.teardown(() => inst.close?.());
  return inst;
}

export const message = (over: Partial<EmailSendInput> = {}): EmailSendInput => ({
  message_id: '<em_1@mail.example>',
  idempotency_key: 'em_1',
  from: { address: 'news@mail.example', name: 'News' },
  to: [{ address: 'ann@example.org' }],
  cc: [{ address: 'carl@example.org' }],
  bcc: [{ address: 'dora@example.org' }],
  subject: 'Grüße',
  text: 'plain',
  html: '<p>html</p>',
  attachments: [{ filename: 'a.txt', content: Buffer.from('attached').toString('base64'), content_type: 'text/plain' }],
  headers: {},
  ...over,
});

export const opts = () => ({ signal: new AbortController().signal, deadline: Date.now() + 60_000 });
