import t from 'tap';
import type { FastifyInstance } from 'fastify';
import type { Activated } from '../../helpers/app.js';
import { frozenNow } from '../../helpers/clock.js';
import { smsApp, post, get, untilState, outboxCount } from './sms-app.js';

// Passcodes with Twilio Verify's limits, each hit with its status and code: 6 digits, 10
// minutes, 5 wrong checks then locked until expiry, 1 send per 30 s and 5 sends without a
// successful check per number, per account. The clock the limits read (core/clock.ts) stands
// still unless a test moves it; the jobs that send the codes run on real time.

const S = 1000;

async function sendOtp(app: FastifyInstance, who: Activated, to: string) {
  const res = await post(app, who, '/v1/sms/otp', { to });
  if (res.statusCode !== 200) return { res };
  const r = res.json();
  await untilState(app, who, r.sms_id, 'sent');
  const kept = (await get(app, who, `/v1/sms/${r.sms_id}/captured`)).json();
  return { res, r, code: /\b(\d{6})\b/.exec(kept.body)![1] };
}

const verify = (app: FastifyInstance, who: Activated, to: string, code: string) =>
  post(app, who, '/v1/sms/verify', { to, code });

const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

t.test('OTP', async (t) => {
  const clock = await frozenNow(t);
  const { app, a, b } = await smsApp(t);

  t.test('a code is 6 digits, valid once, stored hashed', async (t) => {
    const to = '+14155550101';
    const { r, code } = await sendOtp(app, a, to);
    t.match(r, { request_id: /^otp_/, sms_id: /^sms_/ });
    t.equal(Date.parse(r.expires_at), clock.now() + 600 * S, '10 minutes');
    t.match(code, /^\d{6}$/);
    const row = await app.svc.db.selectFrom('sms_otp').selectAll().where('phone', '=', to).executeTakeFirstOrThrow();
    t.notMatch(JSON.stringify(row), code, 'the code is not stored');
    t.same((await verify(app, a, to, wrong(code))).json(), { valid: false });
    t.same((await verify(app, a, to, code)).json(), { valid: true });
    t.same((await verify(app, a, to, code)).json(), { valid: false }, 'a verified code cannot be used twice');
  });

  t.test('one send per 30 s per number: 429 rate_limited with retry-after', async (t) => {
    const to = '+14155550102';
    const first = await sendOtp(app, a, to);
    clock.advance(29 * S);
    const { res } = await sendOtp(app, a, to);
    t.equal(res.statusCode, 429);
    t.equal(res.json().error.code, 'rate_limited');
    t.equal(res.headers['retry-after'], '1');
    clock.advance(1 * S);
    const second = await sendOtp(app, a, to);
    t.equal(second.res.statusCode, 200);
    if (first.code !== second.code)
      t.same((await verify(app, a, to, first.code!)).json(), { valid: false }, 'a new code replaces the old');
    t.same((await verify(app, a, to, second.code!)).json(), { valid: true });
  });

  t.test('5 sends without a successful check, then 429 rate_limited until the window ends', async (t) => {
    const to = '+14155550103';
    for (let i = 0; i < 5; i++) {
      t.equal((await sendOtp(app, a, to)).res.statusCode, 200, `send ${i + 1}`);
      clock.advance(30 * S);
    }
    const before = await outboxCount(app);
    const { res } = await sendOtp(app, a, to);
    t.equal(res.statusCode, 429);
    t.equal(res.json().error.code, 'rate_limited');
    t.equal(res.headers['retry-after'], String(600 - 150), 'until 10 minutes after the first');
    t.equal(await outboxCount(app), before, 'nothing queued');
    clock.advance(450 * S);
    t.equal((await sendOtp(app, a, to)).res.statusCode, 200, 'a new window');
  });

  t.test('a successful check clears the send limit', async (t) => {
    const to = '+14155550104';
    let last = '';
    for (let i = 0; i < 5; i++) {
      last = (await sendOtp(app, a, to)).code!;
      clock.advance(30 * S);
    }
    t.same((await verify(app, a, to, last)).json(), { valid: true });
    t.equal((await sendOtp(app, a, to)).res.statusCode, 200);
  });

  t.test('5 wrong checks, then 429 otp_attempts_exceeded until it expires, even for the right code', async (t) => {
    const to = '+14155550105';
    const { code } = await sendOtp(app, a, to);
    for (let i = 0; i < 5; i++) t.same((await verify(app, a, to, wrong(code!))).json(), { valid: false });
    clock.advance(60 * S);
    const res = await verify(app, a, to, code!);
    t.equal(res.statusCode, 429);
    t.equal(res.json().error.code, 'otp_attempts_exceeded');
    t.equal(res.headers['retry-after'], '540');
    clock.advance(540 * S);
    t.same((await verify(app, a, to, code!)).json(), { valid: false }, 'expired');
    const again = await sendOtp(app, a, to);
    t.same((await verify(app, a, to, again.code!)).json(), { valid: true }, 'a new passcode after expiry');
  });

  t.test('a code expires after 10 minutes', async (t) => {
    const to = '+14155550106';
    const one = await sendOtp(app, a, to);
    clock.advance(600 * S - 1);
    t.equal((await verify(app, a, to, wrong(one.code!))).statusCode, 200, 'still live at 599.999 s');
    clock.advance(1);
    t.same((await verify(app, a, to, one.code!)).json(), { valid: false });
  });

  t.test("per account: another account's passcode to the same number is its own", async (t) => {
    const to = '+14155550107';
    const fromA = await sendOtp(app, a, to);
    const fromB = await sendOtp(app, b, to);
    t.equal(fromB.res.statusCode, 200, "a's 30-s limit does not hold b back");
    if (fromA.code !== fromB.code) t.same((await verify(app, b, to, fromA.code!)).json(), { valid: false });
    t.same((await verify(app, b, to, fromB.code!)).json(), { valid: true });
    t.same((await verify(app, a, to, fromA.code!)).json(), { valid: true });
  });

  t.test('retention removes rows whose passcode expired over otp_retention_days ago', async (t) => {
    const day = 86_400 * S;
    const row = (phone: string, at: number) => ({
      account_id: a.account_id,
      phone,
      request_id: `otp_${phone.slice(1)}`,
      code_hash: 'x',
      expires_at: at,
      checks: 0,
      verified_at: null,
      last_sent_at: at - 600 * S,
      sends: 1,
      window_started_at: at - 600 * S,
    });
    await app.svc.db
      .insertInto('sms_otp')
      .values([row('+14155550190', Date.now() - 2 * day), row('+14155550191', Date.now() - day / 2)])
      .execute();
    t.match(await app.svc.retention.run(), { sms_otp: 1 });
    const left = await app.svc.db
      .selectFrom('sms_otp')
      .select('phone')
      .where('phone', 'like', '+1415555019%')
      .execute();
    t.same(
      left.map((r: any) => r.phone),
      ['+14155550191']
    );
  });

  t.test('bad input is 400 and sends nothing', async (t) => {
    const before = await outboxCount(app);
    for (const to of ['4155550100', '+1415', '+10005550100']) {
      const res = await post(app, a, '/v1/sms/otp', { to });
      t.equal(res.statusCode, 400);
      t.equal(res.json().error.code, 'validation_failed');
    }
    for (const code of ['12345', '1234567', 'abcdef']) {
      const res = await verify(app, a, '+14155550101', code);
      t.equal(res.statusCode, 400, code);
    }
    t.equal(await outboxCount(app), before);
  });
});
