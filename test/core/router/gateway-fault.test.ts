import t from 'tap';
import { activate } from '../../helpers/app.js';
import { meterCall, money, scriptedApp, script } from '../../helpers/scripted-app.js';
import { isGatewayFault } from '../../../core/router/failure.js';

// database-independent: the router's classification of exceptions.

const TRIAL = 5_000_000;

t.test("the gateway's own exception in a vendor call: a 500, no cooldown, no failover, nothing charged", async (t) => {
  const { app } = await scriptedApp(t, [
    { id: 'a', price_micros: 100_000 },
    { id: 'b', price_micros: 100_000 },
  ]);
  const acct = await activate(app);
  script('a').mode = 'local_bug';
  const res = await meterCall(app, acct.auth, { input: 'hi' });
  t.equal(res.statusCode, 500, res.body);
  t.equal(res.json().error.code, 'internal_error');
  t.ok(res.headers['x-request-id']);
  t.equal(script('b').calls.length, 0, 'not sent elsewhere: another vendor would not fix our bug');
  t.notOk(app.svc.router.cooldowns.cooling('a'), 'the vendor is not cooled down for every tenant');
  t.same(await money(app, acct.account_id), { balance: TRIAL, usage: [], holds: 0 });
  script('a').mode = 'ok';
  const next = await meterCall(app, acct.auth, { input: 'hi' });
  t.equal(next.json().vendor, 'a', 'and it stays first');
});

t.test("which exceptions are the gateway's own", async (t) => {
  const circular: Record<string, unknown> = {};
  circular.self = circular;
  const thrown = (f: () => unknown) => {
    try {
      f();
    } catch (e) {
      return e;
    }
  };
  t.ok(isGatewayFault(thrown(() => JSON.stringify(circular))), 'a value JSON cannot hold');
  t.ok(isGatewayFault(thrown(() => JSON.stringify({ n: 1n }))));
  t.ok(isGatewayFault(new RangeError('Maximum call stack size exceeded')));
  t.ok(isGatewayFault(thrown(() => (undefined as unknown as { x: number }).x)), 'a bug');
  t.notOk(
    isGatewayFault(Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNRESET' } })),
    "fetch's socket failure is the vendor's"
  );
  t.notOk(isGatewayFault(new Error('socket hang up')));
  t.notOk(isGatewayFault(Object.assign(new Error('x'), { status: 500 })));
});
