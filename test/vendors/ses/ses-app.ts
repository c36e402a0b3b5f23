import { Value } from '@sinclair/typebox/value';
import ses from '../../../vendors/ses/index.js';
import type { EmailSendInput } from '../../../core/capabilities/email.js';
import { emailMessage } from '../../helpers/email-message.js';
import { vendorContext } from '../../helpers/vendor-context.js';
import { SES_KEY_ID, SES_SECRET, TOPIC, type sesFake } from '../../fakes/ses-fake.js';
import type { Tap } from '../../helpers/tap.js';

// The ses adapter against the fake, as its vendor tests create it: the fake's endpoint, its SNS
// host and CA, loopback allowed by the egress rules unless a test says otherwise.

export const opts = () => ({ signal: new AbortController().signal, deadline: Date.now() + 30_000 });

export async function sesAdapter(
  t: Tap,
  fake: Awaited<ReturnType<typeof sesFake>>,
  over: Record<string, unknown> = {},
  egress: Record<string, unknown> = { allow_private: true }
) {
  const config = Value.Default(ses.configSchema, {
    region: 'eu-west-1',
    access_key_id: SES_KEY_ID,
    secret_access_key: SES_SECRET,
    endpoint: fake.endpoint,
    configuration_set: 'svc-events',
    sns_topic_arns: [TOPIC],
    sns_cert_host: fake.snsHost,
    ca: fake.ca,
    ...over,
  }) as any;
  const inst = await ses.create(config, vendorContext('ses1', t, egress));
  t.teardown(() => inst.close?.());
  return { inst, caps: inst.capabilities as Record<string, any> };
}

/** The shared message, its second To on a Unicode domain (the adapter sends it in punycode). */
export const message = (over: Partial<EmailSendInput> = {}) =>
  emailMessage({ to: [{ address: 'ann@example.org', name: 'Ann' }, { address: 'bob@bücher.example' }], ...over });
