import t from 'tap';
import type { FastifyInstance } from 'fastify';
import { activate, makeApp, type Activated } from '../../helpers/app.js';
import { until } from '../../helpers/wait.js';
import { FAST, receiver, verify } from '../scheduling/receiver.js';
import { RESEND_KEY, RESEND_WEBHOOK_SECRET, resendFake } from '../../fakes/resend-fake.js';
import { POSTMARK_HOOK_PASSWORD, POSTMARK_HOOK_USER, POSTMARK_TOKEN, postmarkFake } from '../../fakes/postmark-fake.js';

// Vendor events through the gateway: a message sent by Resend (the fake speaking its wire)
// bounces; Resend's Svix-signed webhook moves the record to `bounced`, suppresses the address
// (a later send to it is `suppressed`, uncharged) and pushes a signed `email.bounced` to the
// account's endpoint; a forged one is 401 and changes nothing. Postmark's complaint, with the
// Basic credentials of its webhook URL, does the same for `complained`.

type Hook = { body: string; headers: Record<string, string> };

async function vendorApp(t: any, vendor: Record<string, unknown>) {
  const { app } = await makeApp(t, {
    ...FAST,
    server: { public_url: 'https://gw.example.com' },
    plugins: { ...FAST.plugins, email: { default_from: 'Gateway <noreply@example.com>' } },
    vendors: [vendor],
  });
  const a = await activate(app);
  const b = await activate(app);
  const call = (method: 'GET' | 'POST', url: string, who: Activated, payload?: object) =>
    app.inject({ method, url, headers: who.auth, ...(payload ? { payload } : {}) });
  const webhook = (instance: string, w: Hook) =>
    app.inject({ method: 'POST', url: `/v1/email/webhooks/${instance}`, headers: w.headers, payload: w.body });
  const record = async (id: string) => (await call('GET', `/v1/email/${id}`, a)).json();
  const until_ = async (id: string, state: string) => {
    await until(`email ${id} ${state}`, async () => (await record(id)).state === state);
    return record(id);
  };
  const balance = async () => (await call('GET', '/v1/account/balance', a)).json().balance_usd as number;
  const suppressed = async (who: Activated) =>
    (await call('GET', '/v1/email/suppress', who)).json().items.map((i: any) => [i.email, i.reason]);
  return { app, a, b, call, webhook, record, untilState: until_, balance, suppressed };
}

const send = (app: FastifyInstance, who: Activated, to: string) =>
  app.inject({
    method: 'POST',
    url: '/v1/email/send',
    headers: who.auth,
    payload: { to, subject: 'Hi', text: 'Hello' },
  });

t.test(
  'Resend: a signed bounce suppresses the address and reaches the endpoint; a forged one changes nothing',
  async (t) => {
    const fake = await resendFake(t);
    const g = await vendorApp(t, {
      id: 'rs',
      use: 'resend',
      config: { api_key: RESEND_KEY, webhook_secret: RESEND_WEBHOOK_SECRET, base_url: fake.baseUrl },
    });
    const rx = await receiver(t);
    const ep = await g.call('POST', '/v1/events/endpoints', g.a, { url: rx.url, event_types: ['email.bounced'] });
    t.equal(ep.statusCode, 200, ep.body);

    const start = await g.balance();
    const res = await send(g.app, g.a, 'Ann <Ann@Example.org>');
    t.equal(res.statusCode, 200, res.body);
    const id = res.json().id;
    const sent = await g.untilState(id, 'sent');
    const msg = fake.messages.at(-1)!;
    t.match(sent, { vendor: 'rs', vendor_message_id: msg.id, captured: false, cost_usd: 0.0009 });
    t.equal(msg.idempotencyKey, id, 'the record id is the Idempotency-Key');
    t.same(msg.body.to, ['"Ann" <Ann@example.org>']);
    t.equal(Math.round((start - (await g.balance())) * 1e6), 900, 'charged one recipient at Resend');

    const bounce = { to: ['Ann@example.org'], bounce: { type: 'Permanent', subType: 'General', message: '550 5.1.1' } };
    const other = `whsec_${Buffer.from('a-forger-does-not-know-the-key!!').toString('base64')}`;
    const forged = await g.webhook('rs', fake.webhook('email.bounced', msg.id, bounce, { secret: other }));
    t.equal(forged.statusCode, 401, forged.body);
    t.equal(forged.json().error.code, 'unauthenticated');
    const stale = await g.webhook(
      'rs',
      fake.webhook('email.bounced', msg.id, bounce, { at: new Date(Date.now() - 600_000) })
    );
    t.equal(stale.statusCode, 401, 'a replay of an old signed body');
    t.equal((await g.record(id)).state, 'sent', 'unchanged');
    t.same(await g.suppressed(g.a), [], 'nothing suppressed');
    t.equal(rx.hits.length, 0, 'no event');

    const signed = await g.webhook('rs', fake.webhook('email.bounced', msg.id, bounce));
    t.equal(signed.statusCode, 200, signed.body);
    t.equal((await g.record(id)).state, 'bounced');
    t.same(await g.suppressed(g.a), [['ann@example.org', 'bounce']]);
    t.same(await g.suppressed(g.b), [], "another account's list is its own");

    await rx.waitFor(1);
    const event = verify(ep.json().secret, rx.hits[0]) as any;
    t.match(event, { type: 'email.bounced', data: { id, state: 'bounced', vendor: 'rs' } });

    // A late `delivered` cannot undo the bounce; it is acknowledged so Resend stops retrying.
    t.equal((await g.webhook('rs', fake.webhook('email.delivered', msg.id))).statusCode, 200);
    t.equal((await g.record(id)).state, 'bounced');

    const before = await g.balance();
    const sentBefore = fake.requests();
    const later = await send(g.app, g.a, 'ann@example.org');
    t.equal(later.statusCode, 200, later.body);
    t.equal(later.json().state, 'suppressed');
    t.equal(await g.balance(), before, 'not charged');
    t.equal(fake.requests(), sentBefore, 'never reached Resend');
  }
);

t.test('Postmark: a complaint with the webhook credentials suppresses; wrong credentials are 401', async (t) => {
  const fake = await postmarkFake(t);
  const g = await vendorApp(t, {
    id: 'pm',
    use: 'postmark',
    config: {
      server_token: POSTMARK_TOKEN,
      webhook_username: POSTMARK_HOOK_USER,
      webhook_password: POSTMARK_HOOK_PASSWORD,
      base_url: fake.baseUrl,
    },
  });
  const res = await send(g.app, g.a, 'carl@example.org');
  t.equal(res.statusCode, 200, res.body);
  const id = res.json().id;
  const sent = await g.untilState(id, 'sent');
  const msg = fake.messages.at(-1)!;
  t.match(sent, { vendor: 'pm', vendor_message_id: msg.id, cost_usd: 0.0018 });
  t.equal(msg.body.MessageStream, 'outbound');

  const complaint = fake.spamComplaint(msg.id);
  const wrong = `Basic ${Buffer.from(`${POSTMARK_HOOK_USER}:not-the-password`).toString('base64')}`;
  const forged = await g.webhook('pm', { ...complaint, headers: { ...complaint.headers, authorization: wrong } });
  t.equal(forged.statusCode, 401, forged.body);
  t.equal((await g.record(id)).state, 'sent');
  t.same(await g.suppressed(g.a), []);

  t.equal((await g.webhook('pm', fake.delivery(msg.id))).statusCode, 200);
  t.equal((await g.record(id)).state, 'delivered');
  t.equal((await g.webhook('pm', complaint)).statusCode, 200);
  t.equal((await g.record(id)).state, 'complained');
  t.same(await g.suppressed(g.a), [['carl@example.org', 'complaint']]);
  t.equal((await send(g.app, g.a, 'carl@example.org')).json().state, 'suppressed');
});
