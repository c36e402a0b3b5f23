// database-independent: the adapter alone against the fake SES API, no gateway
import t from 'tap';
import { generateKeyPairSync } from 'node:crypto';
import { simpleParser } from 'mailparser';
import { classifyGeneric } from '../../../core/router/failure.js';
import { SES_ERRORS, sesFake } from '../../fakes/ses-fake.js';
import { message, opts, sesAdapter } from './ses-app.js';

t.test('SendEmail carries the raw MIME message, its envelope, the configuration set and the record id', async (t) => {
  const fake = await sesFake(t);
  const { inst, caps } = await sesAdapter(t, fake);
  const input = message();
  const out = await caps['email.send'].invoke(input, opts());
  t.equal(fake.sent.length, 1);
  const sent = fake.sent[0];
  t.equal(out.vendor_message_id, sent.id, "SES's MessageId");
  t.match(sent.body, {
    FromEmailAddress: 'news@mail.example',
    Destination: {
      ToAddresses: ['ann@example.org', 'bob@xn--bcher-kva.example'],
      CcAddresses: ['carl@example.org'],
      BccAddresses: ['dora@example.org'],
    },
    ConfigurationSetName: 'svc-events',
    EmailTags: [{ Name: 'svc_id', Value: 'em_1' }],
  });
  const parsed = await simpleParser(sent.raw);
  t.equal(parsed.messageId, '<em_1@mail.example>');
  t.equal(parsed.subject, 'Grüße');
  t.equal(parsed.text?.trim(), 'plain');
  t.equal(parsed.html, '<p>html</p>');
  t.match((parsed.replyTo as any).text, 'help@mail.example');
  t.equal(parsed.attachments[0].content.toString(), 'attached');
  t.notMatch(sent.raw, /dora@/, 'Bcc only in the Destination, never in the headers');
  t.notMatch(sent.raw, /^DKIM-Signature/m, 'no key given, none added');
  t.equal(caps['email.send'].price({ ...input, attachments: [] }), 4 * 100, '0.0001 USD a recipient');
  t.equal(caps['email.send'].price(input), 4 * 100 + 1, 'attachments at 0.12 USD a GB each copy, rounded up');
  const big = { filename: 'b', content: 'A'.repeat(4 * 2_500_000), content_type: 'application/octet-stream' };
  t.equal(
    caps['email.send'].price({ ...input, to: input.to.slice(0, 1), cc: [], bcc: [], attachments: [big] }),
    100 + 900,
    '7.5 MB'
  );
  t.notOk(caps['email.send'].idempotencyKeys, 'SES takes no idempotency key');
  t.same(await inst.health!({ signal: AbortSignal.timeout(10_000) }), { ok: true });
});

t.test("a verified domain's key DKIM-signs the raw message", async (t) => {
  const fake = await sesFake(t);
  const { caps } = await sesAdapter(t, fake);
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  await caps['email.send'].invoke(
    message({ dkim: { domain: 'mail.example', selector: 'svc1', private_key: pem } }),
    opts()
  );
  t.match(fake.sent[0].raw, /^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed; d=mail\.example;[\s\S]*s=svc1;/m);
});

t.test('failures classified from SES errors; a wrong key is auth; nothing resent', async (t) => {
  const fake = await sesFake(t);
  const { caps } = await sesAdapter(t, fake);
  const send = () => caps['email.send'].invoke(message(), opts()).catch((e: unknown) => e);
  fake.failNext(SES_ERRORS.rejected, SES_ERRORS.throttled, SES_ERRORS.paused, SES_ERRORS.internal);
  const rejected = await send();
  t.equal(classifyGeneric(rejected), 'client_error');
  t.match(rejected.message, /MessageRejected: Email address is not verified/);
  t.equal(classifyGeneric(await send()), 'rate_limited');
  t.equal(classifyGeneric(await send()), 'quota', 'sending paused: the operator must act');
  const internal = await send();
  t.equal(classifyGeneric(internal), 'unavailable');
  t.equal(internal.status, 500);
  const wrongSecret = await sesAdapter(t, fake, { secret_access_key: 'not-the-secret' });
  const e1 = await wrongSecret.caps['email.send'].invoke(message(), opts()).catch((e: unknown) => e);
  t.equal(classifyGeneric(e1), 'auth');
  t.match(e1.message, /InvalidSignatureException/);
  const wrongKey = await sesAdapter(t, fake, { access_key_id: 'AKIAWRONG' });
  const e2 = await wrongKey.caps['email.send'].invoke(message(), opts()).catch((e: unknown) => e);
  t.equal(classifyGeneric(e2), 'auth');
  t.match(e2.message, /UnrecognizedClientException/);
  t.equal(fake.sent.length, 0);
});

t.test('every request goes through the egress proxy: an endpoint its rules refuse is never reached', async (t) => {
  const fake = await sesFake(t);
  const { inst, caps } = await sesAdapter(t, fake, {}, {});
  const e = await caps['email.send'].invoke(message(), opts()).catch((e: unknown) => e);
  t.equal(classifyGeneric(e), 'not_sent', (e as Error).message);
  t.match((e as Error).message, /egress proxy refused 127\.0\.0\.1:\d+ \(403/);
  t.equal(fake.sent.length, 0);
  t.match(await inst.health!({ signal: AbortSignal.timeout(10_000) }), { ok: false });
  // Allowed by name only: the same endpoint through egress.allow_hosts.
  const allowed = await sesAdapter(t, fake, {}, { allow_hosts: ['127.0.0.1'] });
  await allowed.caps['email.send'].invoke(message(), opts());
  t.equal(fake.sent.length, 1);
});
