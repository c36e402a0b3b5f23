import t from 'tap';
import { TWILIO_ERRORS, TWILIO_SID, TWILIO_TOKEN, twilioFake } from '../../fakes/twilio-fake.js';
import { smsApp, post, get, untilState, balance, outboxCount } from './sms-app.js';
import { FAST, receiver, verify } from '../scheduling/receiver.js';

// The SMS area on Twilio (the fake speaking the Messages wire): sent with Twilio's segment count
// and price, a signed status callback moves the record, a forged one is 401 and changes nothing,
// a number Twilio refuses is rejected uncharged, bad input is charged nothing.

const PUBLIC = 'https://gw.example.com';

t.test('SMS through twilio', async (t) => {
  const fake = await twilioFake(t);
  const { app, a, b } = await smsApp(t, {
    ...FAST,
    server: { public_url: PUBLIC },
    vendors: [
      {
        id: 'tw',
        use: 'twilio',
        config: { account_sid: TWILIO_SID, auth_token: TWILIO_TOKEN, from: '+15005550006', base_url: fake.baseUrl },
      },
    ],
  });
  const callback = (cb: { url: string; body: string; headers: Record<string, string> }) =>
    app.inject({ method: 'POST', url: new URL(cb.url).pathname, headers: cb.headers, payload: cb.body });

  t.test('sent by twilio, never by the capture sink; priced per segment', async (t) => {
    const start = await balance(app, a);
    const r = (await post(app, a, '/v1/sms/send', { to: '+14155550100', body: `${'a'.repeat(150)}€€€€€€` })).json();
    t.match(r, { state: 'queued', segments: 2 });
    const sent = await untilState(app, a, r.sms_id, 'sent');
    t.match(sent, { vendor: 'tw', captured: false, segments: 2, cost_usd: 0.0166 });
    t.equal(Math.round((start - (await balance(app, a))) * 1e6), 16_600, 'charged 2 × 0.0083 USD');
    const msg = fake.messages.at(-1)!;
    t.match(msg, { to: '+14155550100', from: '+15005550006', statusCallback: `${PUBLIC}/v1/sms/status/tw` });
  });

  t.test('twilio busy (429, not sent): the send waits for twilio, never falls over to the capture sink', async (t) => {
    fake.failNext(TWILIO_ERRORS.tooMany);
    const before = fake.messages.length;
    const r = (await post(app, a, '/v1/sms/send', { to: '+14155550100', body: 'after a 429' })).json();
    const sent = await untilState(app, a, r.sms_id, 'sent');
    t.match(sent, { vendor: 'tw', captured: false }, 'the router passed the stand-in over (core/router/registry.ts)');
    t.equal(fake.messages.length, before + 1, 'twilio took it on the retry');
  });

  t.test('a signed status callback moves the record; a forged one is 401 and changes nothing', async (t) => {
    const r = (await post(app, a, '/v1/sms/send', { to: '+14155550100', body: 'status?' })).json();
    await untilState(app, a, r.sms_id, 'sent');
    const sid = fake.messages.at(-1)!.sid;
    const forged = await callback(fake.callback(sid, 'delivered', {}, 'a-guessed-token'));
    t.equal(forged.statusCode, 401);
    t.equal(forged.json().error.code, 'unauthenticated');
    const cb = fake.callback(sid, 'undelivered', { ErrorCode: '30003' });
    const tampered = await callback({ ...cb, body: cb.body.replace('undelivered', 'delivered') });
    t.equal(tampered.statusCode, 401);
    t.equal((await get(app, a, `/v1/sms/${r.sms_id}`)).json().state, 'sent', 'unchanged');
    t.equal((await callback(cb)).statusCode, 200);
    t.equal((await get(app, a, `/v1/sms/${r.sms_id}`)).json().state, 'undelivered');
    // A late report cannot move a final state; it is acknowledged so Twilio stops retrying.
    t.equal((await callback(fake.callback(sid, 'delivered'))).statusCode, 200);
    t.equal((await get(app, a, `/v1/sms/${r.sms_id}`)).json().state, 'undelivered');
    t.equal((await get(app, b, `/v1/sms/${r.sms_id}`)).statusCode, 404, "another account's record is 404");
  });

  t.test("a delivery report is pushed to the account's event endpoint, signed (Standard Webhooks)", async (t) => {
    const rx = await receiver(t);
    const ep = await post(app, a, '/v1/events/endpoints', { url: rx.url, event_types: ['sms.delivered'] });
    t.equal(ep.statusCode, 200, ep.body);
    const r = (await post(app, a, '/v1/sms/send', { to: '+14155550100', body: 'report me' })).json();
    await untilState(app, a, r.sms_id, 'sent');
    t.equal((await callback(fake.callback(fake.messages.at(-1)!.sid, 'delivered'))).statusCode, 200);
    await rx.waitFor(1);
    const event = verify(ep.json().secret, rx.hits[0]) as any;
    t.match(event, { type: 'sms.delivered', data: { sms_id: r.sms_id, state: 'delivered', vendor: 'tw' } });
  });

  t.test('callbacks to an instance that takes none are 404', async (t) => {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/sms/status/sms-capture',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'MessageSid=x',
    });
    t.equal(res.statusCode, 404);
  });

  t.test('a number twilio refuses: the record is rejected with its code, uncharged', async (t) => {
    const start = await balance(app, a);
    fake.failNext(TWILIO_ERRORS.unsubscribed);
    const r = (await post(app, a, '/v1/sms/send', { to: '+14155550199', body: 'opted out' })).json();
    const rejected = await untilState(app, a, r.sms_id, 'rejected');
    t.match(rejected, { cost_usd: 0, error: { code: '21610', message: /21610/ } });
    t.equal(await balance(app, a), start, 'the hold was released');
  });

  t.test('bad input: 4xx, nothing queued, nothing charged, nothing sent', async (t) => {
    const start = await balance(app, a);
    const queued = await outboxCount(app);
    const sent = fake.messages.length;
    for (const payload of [
      { to: '+1 415 555 0100', body: 'x' },
      { to: '+14155550100', body: 'a'.repeat(1601) },
    ]) {
      const res = await post(app, a, '/v1/sms/send', payload);
      t.equal(res.statusCode, 400);
    }
    t.equal((await post(app, a, '/v1/sms/otp', { to: '14155550100' })).statusCode, 400);
    t.equal(await outboxCount(app), queued);
    t.equal(await balance(app, a), start);
    t.equal(fake.messages.length, sent);
    t.equal(fake.duplicates(), 0, 'no message went out twice');
  });
});
