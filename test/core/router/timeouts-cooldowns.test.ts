import t, { type Test } from 'tap';
import type { FastifyInstance } from 'fastify';
import { activate } from '../../helpers/app.js';
import { shiftedClock } from '../../helpers/clock.js';
import { attemptsOf, meterCall, money, scriptedApp, script } from '../../helpers/scripted-app.js';
import { until } from '../../helpers/wait.js';

t.test("every vendor times out: 504 vendor_timeout within the caller's timeout, nothing charged", async (t) => {
  const { app } = await scriptedApp(t, [{ id: 'a' }, { id: 'b' }]);
  const acct = await activate(app);
  script('a').mode = 'timeout';
  script('b').mode = 'timeout';
  const started = Date.now();
  // 2 s, not less: on a loaded machine (PostgreSQL beside three other test files) a late timer and
  // a slow hold for the second vendor ate a 0.4-s deadline before the second attempt began.
  const res = await meterCall(app, acct.auth, { input: 'x', timeout_seconds: 2 });
  t.equal(res.statusCode, 504);
  const e = res.json().error;
  t.equal(e.code, 'vendor_timeout');
  t.equal(e.message, 'No vendor answered test.run in time (a, b).');
  t.same(attemptsOf(res.json()), ['a:timeout', 'b:timeout']);
  // The deadline is shared: both vendors are given the caller's 2 s counted from the request, not
  // 2 s each, so the call ends on time; how late a busy machine's timers fire is not measured.
  const [ca] = script('a').calls;
  const [cb] = script('b').calls;
  t.equal(cb.deadline, ca.deadline, 'one deadline for both attempts');
  t.ok(
    ca.deadline >= started + 2000 && ca.deadline <= ca.at + 2000,
    `the caller's timeout, from the request (${ca.deadline - started} ms after it was sent)`
  );
  // The first gets about half of it (a timer never fires early), the second what is left.
  const [first, second] = e.details.attempts;
  t.ok(first.latency_ms >= 500, `first latency ${first.latency_ms}`);
  t.ok(second.latency_ms > 0, `second latency ${second.latency_ms}`);
  t.same(await money(app, acct.account_id), { balance: 5_000_000, usage: [], holds: 0 });
});

t.test('an idempotent capability fails over after a timeout', async (t) => {
  const { app } = await scriptedApp(t, [
    { id: 'slow', price_micros: 500 },
    { id: 'fast', price_micros: 700 },
  ]);
  const acct = await activate(app);
  script('slow').mode = 'timeout';
  // 2 s, shared: the slow vendor gets about half; with 0.4 s a loaded machine could spend the
  // fast one's 0.2 s on its hold before it was called (504 instead of a failover).
  const res = await meterCall(app, acct.auth, { input: 'x', timeout_seconds: 2 });
  t.equal(res.statusCode, 200);
  t.same(attemptsOf(res.json()), ['slow:timeout', 'fast:ok']);
  t.equal((await money(app, acct.account_id)).balance, 5_000_000 - 700);
});

t.test('a vendor that failed is tried last next time; a success clears it', async (t) => {
  const { app } = await scriptedApp(t, [{ id: 'a' }, { id: 'b' }]);
  const acct = await activate(app);
  const cooldowns = app.svc.router.cooldowns;
  script('a').once.push('fail');
  t.same(attemptsOf((await meterCall(app, acct.auth, { input: '1' })).json()), ['a:unavailable', 'b:ok']);
  t.ok(cooldowns.cooling('a'));

  t.same(attemptsOf((await meterCall(app, acct.auth, { input: '2' })).json()), ['b:ok'], 'a goes last');
  t.equal(script('a').calls.length, 1);

  // Cooling vendors are still tried when the others fail, and one success clears the cooldown.
  script('b').once.push('fail');
  t.same(attemptsOf((await meterCall(app, acct.auth, { input: '3' })).json()), ['b:unavailable', 'a:ok']);
  t.notOk(cooldowns.cooling('a'));
  t.notOk('a' in cooldowns.snapshot(), 'streak and cooldown gone');
  t.ok(cooldowns.cooling('b'));
  t.same(attemptsOf((await meterCall(app, acct.auth, { input: '4' })).json()), ['a:ok']);
});

t.test('repeated failures cool a vendor down for longer each time', async (t) => {
  const { app } = await scriptedApp(t, [{ id: 'a' }, { id: 'b' }]);
  const acct = await activate(app);
  script('a').mode = 'fail';
  script('b').mode = 'fail';
  await meterCall(app, acct.auth, { input: '1' });
  const first = app.svc.router.cooldowns.snapshot().a;
  await meterCall(app, acct.auth, { input: '2' });
  const second = app.svc.router.cooldowns.snapshot().a;
  t.equal(first.streak, 1);
  t.equal(second.streak, 2);
  t.ok(second.until - first.until >= 1500, 'the second cooldown is about twice the first');
});

t.test('retry-after is respected: the vendor is back first once it has passed', async (t) => {
  const { app } = await scriptedApp(t, [{ id: 'a' }, { id: 'b' }]);
  const acct = await activate(app);
  const clock = shiftedClock(t);
  // 30 s, passed by moving the clock: a real 0.3-s wait raced the second call on a loaded machine.
  script('a').once.push({ mode: 'rate_limit', retry_after_s: 30 });
  const before = Date.now();
  t.same(attemptsOf((await meterCall(app, acct.auth, { input: '1' })).json()), ['a:rate_limited', 'b:ok']);
  const after = Date.now();
  const until = app.svc.router.cooldowns.snapshot().a.until;
  // 30 s from the vendor's answer, which came between `before` and `after` (without a
  // retry-after a rate-limited vendor would cool for 5 s).
  t.ok(
    until - before >= 30_000 && until - after <= 30_000,
    `cooling ${until - before} ms from the call, ${until - after} from its end`
  );
  t.same(attemptsOf((await meterCall(app, acct.auth, { input: '2' })).json()), ['b:ok']);
  clock.advance(until - Date.now() - 1_000);
  t.same(attemptsOf((await meterCall(app, acct.auth, { input: '3' })).json()), ['b:ok'], 'a second before: b');
  clock.advance(until - Date.now() + 1);
  t.same(attemptsOf((await meterCall(app, acct.auth, { input: '4' })).json()), ['a:ok']);
});

const GONE = new Error('client closed the connection');

/** A call to a vendor that never answers, which the caller leaves (ctrl.abort(GONE)) on its way: rejected with that, at once. */
async function leftCall(t: Test, app: FastifyInstance, accountId: string, ctrl: AbortController) {
  // Rejected with the caller's reason, not vendor_timeout: it did not wait for the (10-minute) timeout.
  await t.rejects(
    app.svc.router.call('test.run', { input: 'x' }, { accountId, signal: ctrl.signal, timeoutMs: 600_000 }),
    GONE
  );
  t.same(await money(app, accountId), { balance: 5_000_000, usage: [], holds: 0 }, 'the hold given back');
}

t.test('a caller gone while its hold was being taken: the vendor is never called, the hold given back', async (t) => {
  const { app } = await scriptedApp(t, [{ id: 'a', price_micros: 5_000 }, { id: 'b' }]);
  const acct = await activate(app);
  script('a').mode = 'timeout';
  const ctrl = new AbortController();
  // The caller leaves during the reserve (on a loaded database it takes a while).
  const wallet = app.svc.wallet;
  const reserve = wallet.reserve.bind(wallet);
  wallet.reserve = async (...args: Parameters<typeof reserve>) => {
    const hold = await reserve(...args);
    ctrl.abort(GONE);
    return hold;
  };
  t.teardown(() => {
    wallet.reserve = reserve;
  });
  await leftCall(t, app, acct.account_id, ctrl);
  t.equal(script('a').calls.length + script('b').calls.length, 0, 'no vendor called');
});

t.test('a caller that goes away ends the call: no failover, the hold given back', async (t) => {
  const { app } = await scriptedApp(t, [{ id: 'a', price_micros: 5_000 }, { id: 'b' }]);
  const acct = await activate(app);
  script('a').mode = 'timeout';
  const ctrl = new AbortController();
  // Gone once vendor a has the call (not after a fixed time, which a slow reserve could outlast).
  void until('vendor a to be called', () => script('a').calls.length === 1).then(() => ctrl.abort(GONE));
  await leftCall(t, app, acct.account_id, ctrl);
  t.equal(script('b').calls.length, 0);
  t.notOk(app.svc.router.cooldowns.cooling('a'), 'a caller leaving says nothing about the vendor');
  await t.rejects(
    app.svc.router.call('test.run', { input: 'x' }, { accountId: acct.account_id, signal: ctrl.signal }),
    GONE,
    'already gone: not started'
  );
  t.equal(script('a').calls.length, 1);
});
