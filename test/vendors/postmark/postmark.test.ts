// database-independent: the adapter alone against the fake, no gateway
import t from 'tap';
import postmark from '../../../vendors/postmark/index.js';
import { basicAuthMatches } from '../../../vendors/postmark/events.js';
import { classifyGeneric, type VendorFailure } from '../../../core/router/failure.js';
import { vendorContext } from '../../helpers/vendor-context.js';
import { emailInput, invokeOpts } from '../../helpers/email-input.js';
import {
  POSTMARK_ERRORS,
  POSTMARK_HOOK_PASSWORD,
  POSTMARK_HOOK_USER,
  POSTMARK_TOKEN,
  postmarkFake,
} from '../../fakes/postmark-fake.js';

const ctx = vendorContext('pm');

async function adapter(baseUrl: string, over: Record<string, unknown> = {}) {
  const config = {
    server_token: POSTMARK_TOKEN,
    message_stream: 'outbound',
    webhook_username: POSTMARK_HOOK_USER,
    webhook_password: POSTMARK_HOOK_PASSWORD,
    base_url: baseUrl,
    price_usd_per_recipient: 0.0018,
    ...over,
  };
  return (await postmark.create(config as any, ctx)).capabilities as Record<string, any>;
}

t.test('a send is one JSON POST with the server token, recipients comma-joined; MessageID comes back', async (t) => {
  const fake = await postmarkFake(t);
  const caps = await adapter(fake.baseUrl, { message_stream: 'transactional' });
  const input = emailInput();
  const out = await caps['email.send'].invoke(input, invokeOpts({ idempotencyKey: 'em_test1' }));
  t.equal(out.vendor_message_id, fake.messages[0].id);
  t.same(fake.messages[0].body, {
    From: '"Example, Inc." <noreply@example.com>',
    To: '"Ann \\"A\\" Lee" <ann@example.org>, bob@xn--bcher-kva.example',
    Cc: 'carl@example.org',
    Bcc: 'dora@example.org',
    ReplyTo: 'help@example.com',
    Subject: 'Hello — Grüße',
    HtmlBody: '<p>Hi there</p>',
    TextBody: 'Hi there',
    Headers: [{ Name: 'X-Campaign', Value: 'welcome' }],
    Attachments: [{ Name: 'a.txt', Content: Buffer.from('attached').toString('base64'), ContentType: 'text/plain' }],
    MessageStream: 'transactional',
  });
  t.equal(caps['email.send'].price(input), 4 * 1800, 'every recipient priced, as Postmark counts them');
  t.notOk(caps['email.send'].idempotencyKeys, 'Postmark takes no idempotency key: never resent after a crash');
});

t.test('failures classified: 422 ErrorCodes by meaning, the token auth, maintenance not sent', async (t) => {
  const fake = await postmarkFake(t);
  const caps = await adapter(fake.baseUrl);
  const send = () => caps['email.send'].invoke(emailInput(), invokeOpts()).catch((e: unknown) => e as VendorFailure);
  const cases: [keyof typeof POSTMARK_ERRORS, string][] = [
    ['invalidRequest', 'client_error'],
    ['inactiveRecipient', 'client_error'],
    ['notAllowed', 'quota'],
    ['rateLimited', 'rate_limited'],
    ['maintenance', 'not_sent'],
    ['internal', 'unavailable'],
  ];
  fake.failNext(...cases.map(([name]) => POSTMARK_ERRORS[name]));
  for (const [name, kind] of cases) {
    const e = await send();
    t.equal(classifyGeneric(e), kind, `${name}: ${e.message}`);
    t.match(e.message, `ErrorCode ${POSTMARK_ERRORS[name].ErrorCode}`);
  }
  const wrong = await adapter(fake.baseUrl, { server_token: 'nope' });
  const e = await wrong['email.send'].invoke(emailInput(), invokeOpts()).catch((e: unknown) => e as VendorFailure);
  t.equal(classifyGeneric(e), 'auth');
  t.match(e.message, /401 \(ErrorCode 10\)/);
  t.equal(fake.messages.length, 0, 'nothing was sent');
});

t.test('webhooks: Basic credentials checked, then Delivery, Bounce and SpamComplaint read', async (t) => {
  const fake = await postmarkFake(t);
  const caps = await adapter(fake.baseUrl);
  const { vendor_message_id: id } = await caps['email.send'].invoke(emailInput(), invokeOpts());
  const read = (w: { body: string; headers: Record<string, string> }) =>
    caps['email.events'].invoke({ url: 'https://gw.example.com/v1/email/webhooks/pm', ...w }, invokeOpts());
  t.same(await read(fake.delivery(id)), [
    { vendor_message_id: id, state: 'delivered', recipients: ['ann@example.org'] },
  ]);
  t.match(await read(fake.hardBounce(id)), [
    {
      vendor_message_id: id,
      state: 'bounced',
      recipients: ['ann@example.org'],
      permanent: true,
      detail: /^HardBounce: The server was unable to deliver/,
    },
  ]);
  t.match(
    await read(fake.softBounce(id)),
    [{ state: 'bounced', permanent: false }],
    'a soft bounce suppresses nothing'
  );
  t.same(await read(fake.spamComplaint(id)), [
    { vendor_message_id: id, state: 'complained', recipients: ['ann@example.org'] },
  ]);
  t.same(await read(fake.webhook({ RecordType: 'Open', MessageID: id, Recipient: 'ann@example.org' })), []);
  t.same(await read(fake.webhook({ RecordType: 'SubscriptionChange', MessageID: id })), []);

  const refused = async (what: string, w: { body: string; headers: Record<string, string> }) =>
    t.equal(classifyGeneric(await read(w).catch((e: unknown) => e)), 'auth', what);
  const good = fake.hardBounce(id);
  const as = (user: string, password: string) => ({
    ...good,
    headers: { ...good.headers, authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` },
  });
  await refused('a wrong password', as(POSTMARK_HOOK_USER, 'guessed-password-123'));
  await refused('a wrong user', as('someone', POSTMARK_HOOK_PASSWORD));
  await refused('a password one character short', as(POSTMARK_HOOK_USER, POSTMARK_HOOK_PASSWORD.slice(0, -1)));
  const { authorization: _a, ...anonymous } = good.headers;
  await refused('no credentials', { ...good, headers: anonymous });
  const unconfigured = await adapter(fake.baseUrl, { webhook_password: undefined });
  const e = await unconfigured['email.events'].invoke({ url: '', ...good }, invokeOpts()).catch((e: unknown) => e);
  t.equal(classifyGeneric(e), 'auth', 'no credentials configured: nothing verifies');

  t.ok(basicAuthMatches(good.headers.authorization, POSTMARK_HOOK_USER, POSTMARK_HOOK_PASSWORD));
  t.notOk(basicAuthMatches(undefined, POSTMARK_HOOK_USER, POSTMARK_HOOK_PASSWORD));
});
