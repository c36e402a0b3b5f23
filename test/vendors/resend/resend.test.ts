// database-independent: the adapter alone against the fake, no gateway
import t from 'tap';
import { createServer, type AddressInfo } from 'node:net';
import resend from '../../../vendors/resend/index.js';
import { classifyGeneric, type VendorFailure } from '../../../core/router/failure.js';
import { NOT_SENT_KINDS } from '../../../core/outbox/outbox.js';
import { vendorContext } from '../../helpers/vendor-context.js';
import { emailInput, invokeOpts } from '../../helpers/email-input.js';
import { RESEND_ERRORS, RESEND_KEY, RESEND_WEBHOOK_SECRET, resendFake } from '../../fakes/resend-fake.js';

const ctx = vendorContext('rs');

async function adapter(baseUrl: string, over: Record<string, unknown> = {}) {
  const config = { api_key: RESEND_KEY, webhook_secret: RESEND_WEBHOOK_SECRET, base_url: baseUrl, ...over };
  return (await resend.create({ price_usd_per_recipient: 0.0009, ...config } as any, ctx)).capabilities as Record<
    string,
    any
  >;
}

t.test('a send is one JSON POST with the Bearer key and the idempotency key; the id comes back', async (t) => {
  const fake = await resendFake(t);
  const caps = await adapter(fake.baseUrl);
  const input = emailInput();
  const out = await caps['email.send'].invoke(input, invokeOpts({ idempotencyKey: 'em_test1' }));
  t.match(out.vendor_message_id, /^[0-9a-f-]{36}$/);
  t.same(out.accepted, ['ann@example.org', 'bob@xn--bcher-kva.example', 'carl@example.org', 'dora@example.org']);
  t.same(fake.messages[0].body, {
    from: '"Example, Inc." <noreply@example.com>',
    to: ['"Ann \\"A\\" Lee" <ann@example.org>', 'bob@xn--bcher-kva.example'],
    cc: ['carl@example.org'],
    bcc: ['dora@example.org'],
    reply_to: 'help@example.com',
    subject: 'Hello — Grüße',
    html: '<p>Hi there</p>',
    text: 'Hi there',
    headers: { 'X-Campaign': 'welcome' },
    attachments: [
      { filename: 'a.txt', content: Buffer.from('attached').toString('base64'), content_type: 'text/plain' },
    ],
  });
  t.equal(fake.messages[0].idempotencyKey, 'em_test1', "the contract's idempotency_key as Idempotency-Key");
  t.equal(caps['email.send'].price(input), 4 * 900, 'every recipient priced, as Resend counts them');
  t.equal(caps['email.send'].idempotencyKeys, true, 'the outbox may resend after a crash');

  // A resend after a crash: the same key, the same body; Resend answers the first id and sends nothing.
  const again = await caps['email.send'].invoke(input, invokeOpts({ idempotencyKey: 'em_test1' }));
  t.equal(again.vendor_message_id, out.vendor_message_id);
  t.equal(fake.messages.length, 1, 'sent once');
  t.equal(fake.requests(), 2);

  const bare = emailInput({ idempotency_key: 'em_test2', cc: [], bcc: [], reply_to: undefined, html: undefined });
  await caps['email.send'].invoke({ ...bare, headers: {}, attachments: [] }, invokeOpts());
  t.same(Object.keys(fake.messages[1].body).sort(), ['from', 'subject', 'text', 'to'], 'empty parts left out');
});

t.test('failures classified so that one Resend may have taken is never retried', async (t) => {
  const fake = await resendFake(t);
  const caps = await adapter(fake.baseUrl);
  const send = (over = {}) =>
    caps['email.send'].invoke(emailInput(over), invokeOpts()).catch((e: unknown) => e as VendorFailure);
  fake.failNext(
    RESEND_ERRORS.rateLimited,
    RESEND_ERRORS.dailyQuota,
    RESEND_ERRORS.unverifiedDomain,
    RESEND_ERRORS.invalidAttachment,
    RESEND_ERRORS.internal
  );
  const limited = await send();
  t.equal(classifyGeneric(limited), 'rate_limited', limited.message);
  t.equal(limited.retryAfterMs, 2000, "Resend's Retry-After");
  t.match(limited.message, /429 \(rate_limit_exceeded\)/);
  for (const kind of ['quota', 'client_error', 'client_error', 'unavailable']) {
    const e = await send();
    t.equal(classifyGeneric(e), kind, e.message);
  }
  t.ok(NOT_SENT_KINDS.has('rate_limited'), 'a 429 took nothing: the outbox retries it');
  t.notOk(NOT_SENT_KINDS.has('unavailable'), 'a 5xx may follow acceptance: the outbox does not');

  const wrong = await adapter(fake.baseUrl, { api_key: 're_wrong' });
  t.equal(
    classifyGeneric(await wrong['email.send'].invoke(emailInput(), invokeOpts()).catch((e: unknown) => e)),
    'auth'
  );

  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const { port } = closed.address() as AddressInfo;
  await new Promise((r) => closed.close(r));
  const down = await adapter(`http://127.0.0.1:${port}`);
  const d = await down['email.send'].invoke(emailInput(), invokeOpts()).catch((e: unknown) => e);
  t.equal(classifyGeneric(d), 'not_sent', 'connection refused: nothing left');
  t.equal(fake.messages.length, 0, 'nothing was sent');

  await caps['email.send'].invoke(emailInput(), invokeOpts());
  const reused = await send({ subject: 'another body under the same key' });
  t.equal(classifyGeneric(reused), 'client_error', reused.message);
  t.match(reused.message, /409 \(invalid_idempotent_request\)/);
  t.equal(fake.messages.length, 1, 'a key reused for another message sends nothing');
});

t.test('webhooks: Svix-verified, then read; forged, tampered, stale and unsigned ones throw auth', async (t) => {
  const fake = await resendFake(t);
  const caps = await adapter(fake.baseUrl);
  const { vendor_message_id: id } = await caps['email.send'].invoke(emailInput(), invokeOpts());
  const read = (w: { body: string; headers: Record<string, string> }) =>
    caps['email.events'].invoke({ url: 'https://gw.example.com/v1/email/webhooks/rs', ...w }, invokeOpts());
  const refused = async (what: string, w: { body: string; headers: Record<string, string> }) =>
    t.equal(classifyGeneric(await read(w).catch((e: unknown) => e)), 'auth', what);

  t.same(await read(fake.webhook('email.delivered', id)), [
    { vendor_message_id: id, state: 'delivered', recipients: ['ann@example.org', 'bob@xn--bcher-kva.example'] },
  ]);
  const hard = { bounce: { type: 'Permanent', subType: 'General', message: 'The mailbox does not exist.' } };
  t.match(
    await read(fake.webhook('email.bounced', id, { to: ['ann@example.org'] })),
    [{ state: 'bounced', recipients: ['ann@example.org'], permanent: false }],
    'a bounce without a Permanent type suppresses nothing'
  );
  t.same(await read(fake.webhook('email.bounced', id, { to: ['ann@example.org'], ...hard })), [
    {
      vendor_message_id: id,
      state: 'bounced',
      recipients: ['ann@example.org'],
      permanent: true,
      detail: 'Permanent/General: The mailbox does not exist.',
    },
  ]);
  const soft = { bounce: { type: 'Transient', subType: 'MailboxFull', message: 'Mailbox full.' } };
  t.match(await read(fake.webhook('email.bounced', id, soft)), [{ state: 'bounced', permanent: false }]);
  t.same(
    await read(fake.webhook('email.complained', id, { to: ['Ann Lee <ann@example.org>'] })),
    [{ vendor_message_id: id, state: 'complained', recipients: ['ann@example.org'] }],
    'a recipient named with its display name is read as its address'
  );
  for (const type of ['email.sent', 'email.opened', 'email.delivery_delayed', 'contact.created'])
    t.same(await read(fake.webhook(type, id)), [], `${type} moves nothing`);

  const other = `whsec_${Buffer.from('another-key-another-key-another!').toString('base64')}`;
  await refused('signed with another secret', fake.webhook('email.bounced', id, hard, { secret: other }));
  const good = fake.webhook('email.delivered', id);
  await refused('body changed after signing', { ...good, body: good.body.replace('delivered', 'bounced') });
  await refused(
    'signed 6 minutes ago (a replay)',
    fake.webhook('email.delivered', id, {}, { at: new Date(Date.now() - 360_000) })
  );
  await refused(
    'signed 6 minutes ahead',
    fake.webhook('email.delivered', id, {}, { at: new Date(Date.now() + 360_000) })
  );
  const recent = await read(fake.webhook('email.delivered', id, {}, { at: new Date(Date.now() - 240_000) }));
  t.equal(recent.length, 1, 'signed 4 minutes ago: within the tolerance');
  const { 'svix-signature': _sig, ...unsigned } = good.headers;
  await refused('no signature', { ...good, headers: unsigned });
  await refused('another message id', { ...good, headers: { ...good.headers, 'svix-id': 'msg_other' } });
  t.same(
    await read({
      ...good,
      headers: { ...good.headers, 'svix-signature': `v1,AAAA ${good.headers['svix-signature']}` },
    }),
    [{ vendor_message_id: id, state: 'delivered', recipients: ['ann@example.org', 'bob@xn--bcher-kva.example'] }],
    'one good signature among several (a secret being rotated) is enough'
  );
  const unconfigured = await adapter(fake.baseUrl, { webhook_secret: undefined });
  const e = await unconfigured['email.events']
    .invoke({ url: '', ...fake.webhook('email.delivered', id) }, invokeOpts())
    .catch((e: unknown) => e);
  t.equal(classifyGeneric(e), 'auth', 'no secret configured: nothing verifies');
});
