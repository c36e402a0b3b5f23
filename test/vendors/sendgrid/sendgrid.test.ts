// database-independent: the adapter alone against the fake, no gateway
import t from 'tap';
import { createServer, type AddressInfo } from 'node:net';
import { generateKeyPairSync } from 'node:crypto';
import sendgrid from '../../../vendors/sendgrid/index.js';
import { classifyGeneric } from '../../../core/router/failure.js';
import type { EmailSendInput } from '../../../core/capabilities/email.js';
import { emailMessage } from '../../helpers/email-message.js';
import { vendorContext } from '../../helpers/vendor-context.js';
import { SENDGRID_ERRORS, SENDGRID_KEY, sendgridFake } from '../../fakes/sendgrid-fake.js';

const ctx = vendorContext('sg');
const opts = () => ({ signal: new AbortController().signal, deadline: Date.now() + 30_000 });
const WEBHOOK = 'https://gw.example.com/v1/email/webhooks/sg';

async function adapter(baseUrl: string, over: Record<string, unknown> = {}) {
  const config = {
    api_key: SENDGRID_KEY,
    base_url: baseUrl,
    webhook_public_key: '',
    price_usd_per_email: 0.0004,
    ...over,
  };
  return (await sendgrid.create(config as any, ctx)).capabilities as Record<string, any>;
}

const message = (over: Partial<EmailSendInput> = {}) =>
  emailMessage({
    // The same address as a To again: SendGrid refuses one named twice in a personalization.
    cc: [{ address: 'carl@example.org' }, { address: 'ANN@example.org' }],
    headers: { 'List-Unsubscribe': '<mailto:unsub@mail.example>' },
    ...over,
  });

t.test('a send is one JSON POST with a Bearer key; 202 and X-Message-Id come back', async (t) => {
  const fake = await sendgridFake(t);
  const caps = await adapter(fake.baseUrl);
  const input = message();
  const out = await caps['email.send'].invoke(input, opts());
  t.equal(fake.messages.length, 1);
  t.equal(out.vendor_message_id, fake.messages[0].id);
  t.same(out.rejected, []);
  t.same(fake.messages[0].body, {
    personalizations: [
      {
        to: [{ email: 'ann@example.org', name: 'Ann' }, { email: 'bob@xn--bcher-kva.example' }],
        // The same address twice in one personalization is refused by SendGrid: sent once.
        cc: [{ email: 'carl@example.org' }],
        bcc: [{ email: 'dora@example.org' }],
      },
    ],
    from: { email: 'news@mail.example', name: 'News' },
    reply_to: { email: 'help@mail.example' },
    subject: 'Grüße',
    content: [
      { type: 'text/plain', value: 'plain' },
      { type: 'text/html', value: '<p>html</p>' },
    ],
    attachments: [
      { content: input.attachments[0].content, filename: 'a.txt', type: 'text/plain', disposition: 'attachment' },
    ],
    headers: { 'List-Unsubscribe': '<mailto:unsub@mail.example>' },
    custom_args: { svc_id: 'em_1' },
  });
  t.equal(caps['email.send'].price(input), 4 * 400, 'each distinct recipient is one email');
  t.notOk(caps['email.send'].idempotencyKeys, 'SendGrid takes no idempotency key');
  const html = await caps['email.send'].invoke(
    message({ text: undefined, cc: [], bcc: [], attachments: [], headers: {} }),
    opts()
  );
  t.ok(html.vendor_message_id);
  t.same(fake.messages[1].body.content, [{ type: 'text/html', value: '<p>html</p>' }]);
  t.notOk('cc' in fake.messages[1].body.personalizations[0], 'no empty cc array (SendGrid refuses one)');
  t.notOk('attachments' in fake.messages[1].body);
});

t.test('failures classified: auth, client_error, 413, rate_limited, unavailable, not_sent', async (t) => {
  const fake = await sendgridFake(t);
  const caps = await adapter(fake.baseUrl);
  const send = (input = message()) => caps['email.send'].invoke(input, opts()).catch((e: unknown) => e);
  fake.failNext(
    SENDGRID_ERRORS.badRequest,
    SENDGRID_ERRORS.forbidden,
    SENDGRID_ERRORS.tooLarge,
    fake.rateLimited(30),
    SENDGRID_ERRORS.internal
  );
  const bad = await send();
  t.equal(classifyGeneric(bad), 'client_error');
  t.match(bad.message, /from: The from object must be provided/, "SendGrid's error text and field");
  t.equal(classifyGeneric(await send()), 'auth', '403');
  const large = await send();
  t.equal(classifyGeneric(large), 'client_error');
  t.equal(large.status, 413, 'the status is kept, so the area says payload_too_large');
  const busy = await send();
  t.equal(classifyGeneric(busy), 'rate_limited');
  t.ok(busy.retryAfterMs > 0 && busy.retryAfterMs <= 30_000, `waits for X-RateLimit-Reset (${busy.retryAfterMs} ms)`);
  t.equal(classifyGeneric(await send()), 'unavailable', '500');
  const wrong = await adapter(fake.baseUrl, { api_key: 'SG.wrong' });
  t.equal(classifyGeneric(await wrong['email.send'].invoke(message(), opts()).catch((e: unknown) => e)), 'auth');
  const noTo = await send(message({ to: [] }));
  t.equal(classifyGeneric(noTo), 'client_error', 'SendGrid needs a To');
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const { port } = closed.address() as AddressInfo;
  await new Promise((r) => closed.close(r));
  const down = await adapter(`http://127.0.0.1:${port}`);
  t.equal(classifyGeneric(await down['email.send'].invoke(message(), opts()).catch((e: unknown) => e)), 'not_sent');
  t.equal(fake.messages.length, 0, 'nothing was sent');
});

t.test('a real 413 from the fake for a body over its cap', async (t) => {
  const fake = await sendgridFake(t, { maxBytes: 1000 });
  const caps = await adapter(fake.baseUrl);
  const big = Buffer.alloc(2000).toString('base64');
  const e = await caps['email.send']
    .invoke(
      message({ attachments: [{ filename: 'b.bin', content: big, content_type: 'application/octet-stream' }] }),
      opts()
    )
    .catch((e: unknown) => e);
  t.equal(e.status, 413);
});

t.test('event webhook: signature checked (valid, forged, tampered, stale, missing), then events read', async (t) => {
  const fake = await sendgridFake(t);
  const caps = await adapter(fake.baseUrl, { webhook_public_key: fake.publicKey });
  const out = await caps['email.send'].invoke(message(), opts());
  const id = out.vendor_message_id;
  const read = (post: { body: string; headers: Record<string, string> }) =>
    caps['email.events'].invoke({ url: WEBHOOK, ...post }, opts());
  const failure = (post: { body: string; headers: Record<string, string> }) =>
    read(post).then(
      () => 'accepted',
      (e: unknown) => classifyGeneric(e)
    );
  const events = [
    fake.event(id, 'processed', 'ann@example.org'),
    fake.event(id, 'delivered', 'ann@example.org', { response: '250 2.0.0 OK' }),
    fake.event(id, 'bounce', 'bob@xn--bcher-kva.example', {
      type: 'bounce',
      status: '5.1.1',
      reason: '550 5.1.1 user unknown',
    }),
    fake.event(id, 'bounce', 'carl@example.org', { type: 'blocked', status: '4.0.0', reason: 'blocked by list' }),
    fake.event(id, 'dropped', 'dora@example.org', { reason: 'Bounced Address' }),
    fake.event(id, 'dropped', 'dora@example.org', { reason: 'Spam Reporting Address' }),
    fake.event(id, 'spamreport', 'ann@example.org'),
    fake.event(id, 'open', 'ann@example.org'),
    { event: 'delivered', email: 'x@example.org' },
  ];
  t.same(await read(fake.signed(events)), [
    { vendor_message_id: id, recipients: ['ann@example.org'], state: 'delivered', detail: '250 2.0.0 OK' },
    {
      vendor_message_id: id,
      recipients: ['bob@xn--bcher-kva.example'],
      state: 'bounced',
      permanent: true,
      detail: '5.1.1 550 5.1.1 user unknown',
    },
    {
      vendor_message_id: id,
      recipients: ['carl@example.org'],
      state: 'bounced',
      permanent: false,
      detail: '4.0.0 blocked by list',
    },
    { vendor_message_id: id, recipients: ['ann@example.org'], state: 'complained' },
  ]);
  const other = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
  t.equal(await failure(fake.signed(events, { privateKey: other })), 'auth', 'signed with another key');
  const post = fake.signed(events);
  t.equal(await failure({ ...post, body: post.body.replace('"bounce"', '"delivered"') }), 'auth', 'tampered');
  const stale = Math.floor(Date.now() / 1000) - 11 * 60;
  t.equal(await failure(fake.signed(events, { timestamp: stale })), 'auth', 'eleven minutes old');
  t.equal(await failure(fake.signed(events, { timestamp: stale + 22 * 60 })), 'auth', 'eleven minutes ahead');
  t.equal(await failure(fake.signed(events, { timestamp: stale + 2 * 60 })), 'accepted', 'nine minutes old');
  t.equal(await failure({ ...post, headers: { 'content-type': 'application/json' } }), 'auth', 'unsigned');
  const unconfigured = await adapter(fake.baseUrl);
  t.equal(
    await unconfigured['email.events'].invoke({ url: WEBHOOK, ...post }, opts()).then(
      () => 'accepted',
      (e: unknown) => classifyGeneric(e)
    ),
    'auth',
    'no key configured: nothing is taken'
  );
  t.same(await read(fake.signed({ not: 'an array' } as any)), [], 'a signed body of another shape moves nothing');
});

t.test('a webhook_public_key that is not a P-256 public key stops the instance', async (t) => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'der', type: 'spki' });
  await t.rejects(adapter('http://127.0.0.1:1', { webhook_public_key: rsa.toString('base64') }), /P-256/);
  await t.rejects(adapter('http://127.0.0.1:1', { webhook_public_key: 'bm90IGEga2V5' }), /webhook_public_key/);
});
