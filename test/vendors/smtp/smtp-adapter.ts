// The smtp adapter made the way the gateway makes it, for the tests of this folder: its config
// defaulted from the schema, its connections through a local egress proxy, closed at teardown.
import { Value } from '@sinclair/typebox/value';
import { CoreConfigSchema } from '../../../config/schema.js';
import { Egress } from '../../../core/egress/egress.js';
import smtp from '../../../vendors/smtp/index.js';
import type { EmailSendInput } from '../../../core/capabilities/email.js';
import { emailMessage } from '../../helpers/email-message.js';
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

/** The shared adapter-test message with one To and no Reply-To (what these tests check the headers of). */
export const message = (over: Partial<EmailSendInput> = {}): EmailSendInput =>
  emailMessage({ to: [{ address: 'ann@example.org' }], reply_to: undefined, ...over });

export const opts = () => ({ signal: new AbortController().signal, deadline: Date.now() + 60_000 });
