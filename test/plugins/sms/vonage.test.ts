import t from 'tap';
import { VONAGE_KEY, VONAGE_SECRET, VONAGE_SIGNATURE_SECRET, vonageFake } from '../../fakes/vonage-fake.js';
import { smsApp, post, get, untilState, balance } from './sms-app.js';
import { FAST } from '../scheduling/receiver.js';

// The SMS area on Vonage (the fake speaking the SMS API wire): sent with Vonage's part count and
// the client-ref and callback it needs, a signed delivery receipt (GET, Vonage's default, or
// POST-JSON) moves the record, a forged or stale one is 401 and changes nothing, a number
// Vonage refuses fails the record uncharged, a throttled send is sent again by Vonage alone.

const PUBLIC = 'https://gw.example.com';

t.test('SMS through vonage', async (t) => {
  const fake = await vonageFake(t, { method: 'sha256' });
  const { app, a } = await smsApp(t, {
    ...FAST,
    server: { public_url: PUBLIC },
    vendors: [
      {
        id: 'vg',
        use: 'vonage',
        config: {
          api_key: VONAGE_KEY,
          api_secret: VONAGE_SECRET,
          signature_secret: VONAGE_SIGNATURE_SECRET,
          signature_method: 'sha256',
          from: '+15005550006',
          base_url: fake.baseUrl,
        },
      },
    ],
  });
  const deliver = (r: { method: 'GET' | 'POST'; url: string; headers: Record<string, string>; body: string }) => {
    const u = new URL(r.url);
    return app.inject({
      method: r.method,
      url: `${u.pathname}${u.search}`,
      headers: r.headers,
      ...(r.method === 'POST' ? { payload: r.body } : {}),
    });
  };
  const state = async (id: string) => (await get(app, a, `/v1/sms/${id}`)).json().state;

  t.test('sent by vonage, signed, as unicode when it must be; priced per part', async (t) => {
    const start = await balance(app, a);
    const r = (await post(app, a, '/v1/sms/send', { to: '+14155550100', body: `${'ж'.repeat(70)}!` })).json();
    t.match(r, { state: 'queued', segments: 2, encoding: 'UCS-2' });
    const sent = await untilState(app, a, r.sms_id, 'sent');
    t.match(sent, { vendor: 'vg', captured: false, segments: 2, cost_usd: 0.01618 });
    t.equal(Math.round((start - (await balance(app, a))) * 1e6), 16_180, 'charged 2 × 0.00809 USD');
    t.match(fake.messages.at(-1), {
      to: '14155550100',
      from: '15005550006',
      type: 'unicode',
      clientRef: r.sms_id,
      callback: `${PUBLIC}/v1/sms/status/vg`,
      signed: true,
    });
  });

  t.test('a signed receipt moves the record to delivered; a forged or stale one is 401, nothing moves', async (t) => {
    const r = (await post(app, a, '/v1/sms/send', { to: '+14155550100', body: 'deliver me' })).json();
    await untilState(app, a, r.sms_id, 'sent');
    const id = fake.messages.at(-1)!.id;
    const forged = await deliver(fake.receipt(id, 'delivered', { secret: 'a-guessed-secret' }));
    t.equal(forged.statusCode, 401);
    t.equal(forged.json().error.code, 'unauthenticated');
    const stale = fake.receipt(id, 'delivered', { timestamp: Math.floor(Date.now() / 1000) - 3600 });
    t.equal((await deliver(stale)).statusCode, 401);
    t.equal((await deliver(fake.receipt(id, 'delivered', { sign: false }))).statusCode, 401);
    t.equal(await state(r.sms_id), 'sent', 'unchanged');
    const ok = await deliver(fake.receipt(id, 'delivered'));
    t.equal(ok.statusCode, 200, ok.body);
    t.equal(await state(r.sms_id), 'delivered');
    // A late receipt cannot move a final state; it is acknowledged so Vonage stops retrying.
    t.equal((await deliver(fake.receipt(id, 'failed', { errCode: '1' }))).statusCode, 200);
    t.equal(await state(r.sms_id), 'delivered');
  });

  t.test("a long message: its other parts' receipts are acknowledged, the first part's moves it", async (t) => {
    const r = (await post(app, a, '/v1/sms/send', { to: '+14155550100', body: `fail me ${'.'.repeat(200)}` })).json();
    await untilState(app, a, r.sms_id, 'sent');
    const msg = fake.messages.at(-1)!;
    t.equal(msg.ids.length, 2);
    t.equal((await deliver(fake.receipt(msg.ids[1], 'delivered', { as: 'POST-JSON' }))).statusCode, 200);
    t.equal(await state(r.sms_id), 'sent', 'the record knows the first part');
    const res = await deliver(fake.receipt(msg.ids[0], 'expired', { as: 'POST-JSON', errCode: '5' }));
    t.equal(res.statusCode, 200, res.body);
    t.equal(await state(r.sms_id), 'undelivered');
  });

  t.test('throttled (status 1): sent again by vonage, never by the capture sink', async (t) => {
    fake.failNext('1');
    const before = fake.messages.length;
    const r = (await post(app, a, '/v1/sms/send', { to: '+14155550100', body: 'after a throttle' })).json();
    t.match(await untilState(app, a, r.sms_id, 'sent'), { vendor: 'vg', captured: false });
    t.equal(fake.messages.length, before + 1);
  });

  t.test('a destination vonage refuses: the record fails with its reason, uncharged', async (t) => {
    const start = await balance(app, a);
    fake.failNext('29');
    const r = (await post(app, a, '/v1/sms/send', { to: '+14155550199', body: 'demo account' })).json();
    const failed = await untilState(app, a, r.sms_id, 'failed');
    t.match(failed, { cost_usd: 0, error: { message: /status 29/ } });
    t.equal(await balance(app, a), start, 'the hold was released');
    t.equal(fake.duplicates(), 0, 'no message went out twice');
  });
});
