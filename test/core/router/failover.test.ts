import t from 'tap';
import { activate } from '../../helpers/app.js';
import { attemptsOf, meterCall, money, scriptedApp, script } from '../../helpers/scripted-app.js';

// database-independent: the router's failover; the charge is core/wallet's tests', on both.

const TRIAL = 5_000_000;

t.test("a 500 fails over; the caller is charged once, the second vendor's price", async (t) => {
  const { app } = await scriptedApp(t, [
    { id: 'a', price_micros: 100_000 },
    { id: 'b', price_micros: 130_000 },
  ]);
  const acct = await activate(app);
  script('a').mode = 'fail';
  const res = await meterCall(app, acct.auth, { input: 'hi' });
  t.equal(res.statusCode, 200);
  t.equal(res.json().vendor, 'b');
  t.same(attemptsOf(res.json()), ['a:unavailable', 'b:ok']);
  t.match(res.json().metadata.attempts[0], {
    vendor: 'a',
    status: 'unavailable',
    error: { code: 'unavailable', message: /500/ },
  });
  t.equal(res.headers['x-svc-cost-usd'], '0.130000');
  t.same(await money(app, acct.account_id), {
    balance: TRIAL - 130_000,
    usage: [{ amount_micros: -130_000, vendor: 'b', capability: 'test.run' }],
    holds: 0,
  });
});

t.test('every candidate fails: 502 vendor_error listing each attempt, nothing charged', async (t) => {
  const { app } = await scriptedApp(t, [{ id: 'a' }, { id: 'b' }]);
  const acct = await activate(app);
  script('a').mode = 'fail';
  script('b').mode = 'rate_limit';
  const res = await meterCall(app, acct.auth, { input: 'hi' });
  t.equal(res.statusCode, 502);
  const e = res.json().error;
  t.equal(e.code, 'vendor_error');
  t.equal(e.message, 'Every candidate vendor for test.run failed.');
  t.equal(e.details.attempts.length, 2);
  for (const [i, vendor] of ['a', 'b'].entries()) {
    const at = e.details.attempts[i];
    t.equal(at.vendor, vendor);
    t.type(at.latency_ms, 'number');
    t.ok(at.latency_ms >= 0);
  }
  t.same(attemptsOf(res.json()), ['a:unavailable', 'b:rate_limited']);
  t.equal(res.headers['x-svc-cost-usd'], '0.000000', 'a failed metered call says it cost nothing');
  t.same(await money(app, acct.account_id), { balance: TRIAL, usage: [], holds: 0 });
});

t.test('a client error does not fail over and is not retryable', async (t) => {
  const { app } = await scriptedApp(t, [{ id: 'a' }, { id: 'b' }]);
  const acct = await activate(app);
  script('a').mode = 'client_error';
  const res = await meterCall(app, acct.auth, { input: 'hi' });
  t.equal(res.statusCode, 422);
  t.equal(res.json().error.code, 'unprocessable');
  t.match(res.json().error.message, /^a rejected the request: a: upstream answered 400/);
  t.same(attemptsOf(res.json()), ['a:client_error']);
  t.equal(script('b').calls.length, 0);
  t.notOk(app.svc.router.cooldowns.cooling('a'), 'a bad request says nothing about the vendor');
  t.same(await money(app, acct.account_id), { balance: TRIAL, usage: [], holds: 0 });
});

t.test('a non-idempotent capability does not fail over once the vendor may have acted', async (t) => {
  const { app } = await scriptedApp(t, [{ id: 'a' }, { id: 'b' }]);
  const acct = await activate(app);

  script('a').once.push('fail');
  const failed = await meterCall(app, acct.auth, { input: 'send once' }, 'send');
  t.equal(failed.statusCode, 502);
  t.same(attemptsOf(failed.json()), ['a:unavailable']);

  // a is cooling now and goes last; make b the one that may have acted.
  script('b').once.push('timeout');
  const timedOut = await meterCall(app, acct.auth, { input: 'send once', timeout_seconds: 0.2 }, 'send');
  t.equal(timedOut.statusCode, 504);
  t.equal(timedOut.json().error.code, 'vendor_timeout');
  t.same(attemptsOf(timedOut.json()), ['b:timeout']);
  t.equal(script('a').calls.length, 1, 'a was not tried after b timed out');
  t.same(await money(app, acct.account_id), { balance: TRIAL, usage: [], holds: 0 });
});

t.test('a non-idempotent capability fails over when the request was never sent', async (t) => {
  const { app } = await scriptedApp(t, [
    { id: 'a', price_micros: 2000 },
    { id: 'b', price_micros: 3000 },
  ]);
  const acct = await activate(app);
  script('a').mode = 'not_sent';
  const res = await meterCall(app, acct.auth, { input: 'send once' }, 'send');
  t.equal(res.statusCode, 200);
  t.equal(res.json().vendor, 'b');
  t.same(attemptsOf(res.json()), ['a:not_sent', 'b:ok']);
  t.same(await money(app, acct.account_id), {
    balance: TRIAL - 3000,
    usage: [{ amount_micros: -3000, vendor: 'b', capability: 'test.send' }],
    holds: 0,
  });
});

t.test('max_cost_multiplier skips a candidate too dear next to the primary', async (t) => {
  const { app } = await scriptedApp(t, [
    { id: 'a', price_micros: 100 },
    { id: 'dear', price_micros: 200 },
    { id: 'c', price_micros: 140 },
  ]);
  const acct = await activate(app);
  script('a').mode = 'fail';
  const res = await meterCall(app, acct.auth, { input: 'x' });
  t.equal(res.json().vendor, 'c');
  t.same(attemptsOf(res.json()), ['a:unavailable', 'dear:skipped_cost_cap', 'c:ok']);
  t.equal(script('dear').calls.length, 0);

  t.equal((await money(app, acct.account_id)).balance, TRIAL - 140);
});

t.test('a wider max_cost_multiplier lets the dearer candidate in', async (t) => {
  const wide = await scriptedApp(t, [
    { id: 'a2', price_micros: 100 },
    { id: 'dear2', price_micros: 200 },
    { id: 'c2', price_micros: 140 },
  ]);
  const acct2 = await activate(wide.app);
  script('a2').mode = 'fail';
  const wider = await meterCall(wide.app, acct2.auth, { input: 'x', max_cost_multiplier: 2 });
  t.same(attemptsOf(wider.json()), ['a2:unavailable', 'dear2:ok']);
  t.equal((await money(wide.app, acct2.account_id)).balance, TRIAL - 200);
});

t.test('no candidate within the cost cap: 502 that says so', async (t) => {
  const { app } = await scriptedApp(t, [
    { id: 'cheap', price_micros: 100 },
    { id: 'dear', price_micros: 1000 },
  ]);
  const acct = await activate(app);
  script('cheap').mode = 'fail';
  const res = await meterCall(app, acct.auth, { input: 'x' });
  t.equal(res.statusCode, 502);
  t.equal(res.json().error.code, 'vendor_error');
  t.match(res.json().error.message, 'no candidate within the cost cap');
  t.match(res.json().error.message, 'max_cost_multiplier 1.5');
  t.same(attemptsOf(res.json()), ['cheap:unavailable', 'dear:skipped_cost_cap']);
  t.equal(script('dear').calls.length, 0);
  t.same(await money(app, acct.account_id), { balance: TRIAL, usage: [], holds: 0 });
});

t.test(
  'an adapter whose price() misbehaves: before the call nothing happens, after it the estimate is charged',
  async (t) => {
    const { app } = await scriptedApp(t, [{ id: 'a', price_micros: 4_000 }]);
    const acct = await activate(app);
    const impl = app.svc.vendors.get('a')!.instance.capabilities['test.run'];
    impl.price = (_input: unknown, output?: unknown) => (output === undefined ? 4_000 : Number.NaN);
    const res = await meterCall(app, acct.auth, { input: 'x' });
    t.equal(res.statusCode, 200);
    t.equal(res.headers['x-svc-cost-usd'], '0.004000');
    t.same(await money(app, acct.account_id), {
      balance: TRIAL - 4_000,
      usage: [{ amount_micros: -4_000, vendor: 'a', capability: 'test.run' }],
      holds: 0,
    });

    impl.price = () => Number.NaN;
    const broken = await meterCall(app, acct.auth, { input: 'y' });
    t.equal(broken.statusCode, 500);
    t.equal(broken.json().error.code, 'internal_error');
    t.equal(script('a').calls.length, 1, 'the vendor was not called');
    t.equal((await money(app, acct.account_id)).balance, TRIAL - 4_000);
  }
);
