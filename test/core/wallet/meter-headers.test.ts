import t from 'tap';
import { activate } from '../../helpers/app.js';
import { meterCall, scriptedApp, script } from '../../helpers/scripted-app.js';

// database-independent: headers from the charge; the charge is wallet.test.ts's, on both.

t.test('a metered response says what it cost, the balance left, who served it and how long it took', async (t) => {
  const { app } = await scriptedApp(t, [
    { id: 'a', price_micros: 9_999 },
    { id: 'b', price_micros: 1_234 },
  ]);
  const acct = await activate(app);
  script('a').once.push('fail');
  script('b').once.push({ mode: 'ok', delay_ms: 60 });
  const res = await meterCall(app, acct.auth, { input: 'x' });
  t.equal(res.statusCode, 200);
  t.equal(res.headers['x-svc-cost-usd'], '0.001234');
  t.equal(res.headers['x-svc-balance-usd'], '4.998766');
  t.equal(res.headers['x-svc-vendor'], 'b');
  const latency = Number(res.headers['x-svc-latency-ms']);
  t.ok(Number.isInteger(latency) && latency >= 60, `latency ${latency}`);

  const again = await meterCall(app, acct.auth, { input: 'y', vendor: 'a' });
  t.equal(again.headers['x-svc-cost-usd'], '0.009999');
  t.equal(again.headers['x-svc-balance-usd'], '4.988767');
  t.equal(again.headers['x-svc-vendor'], 'a');
});

t.test('the operator markup is in the cost', async (t) => {
  const { app } = await scriptedApp(t, [{ id: 'a', price_micros: 1_000 }], { wallet: { markup: 1.5 } });
  const acct = await activate(app);
  const res = await meterCall(app, acct.auth, { input: 'x' });
  t.equal(res.headers['x-svc-cost-usd'], '0.001500');
  t.equal(res.headers['x-svc-balance-usd'], '4.998500');
});

t.test(
  'failed metered calls say they cost nothing; unmetered and unauthenticated ones carry no cost headers',
  async (t) => {
    const { app } = await scriptedApp(t, [{ id: 'a', price_micros: 6_000_000 }]);
    const acct = await activate(app);
    const broke = await meterCall(app, acct.auth, { input: 'x' });
    t.equal(broke.statusCode, 402);
    t.equal(broke.headers['x-svc-cost-usd'], '0.000000');
    t.equal(broke.headers['x-svc-balance-usd'], '5.000000');
    t.notOk('x-svc-vendor' in broke.headers);

    t.equal(script('a').calls.length, 0, 'the reservation comes before the vendor');

    const plain = await app.inject({ method: 'GET', url: '/v1/account/balance', headers: acct.auth });
    t.equal(plain.statusCode, 200);
    t.notOk(
      Object.keys(plain.headers).some((h) => h.startsWith('x-svc-')),
      'an unmetered route has none'
    );

    const anon = await meterCall(app, {}, { input: 'x' });
    t.equal(anon.statusCode, 401);
    t.notOk(Object.keys(anon.headers).some((h) => h.startsWith('x-svc-')));

    const invalid = await meterCall(app, acct.auth, { input: 'x', surprise: true });
    t.equal(invalid.statusCode, 400);
    t.notOk(
      Object.keys(invalid.headers).some((h) => h.startsWith('x-svc-')),
      'rejected before any vendor was considered'
    );
  }
);
