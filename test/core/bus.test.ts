import t from 'tap';
import { buildApp } from '../../core/app.js';
import { LocalBus } from '../../core/bus/bus.js';
import { makeApp, activate, ONE_NODE_ONLY } from '../helpers/app.js';

const REDIS_URL = process.env.SVC_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

t.test('local bus delivers to subscribers until they unsubscribe', async (t) => {
  const bus = new LocalBus();
  const got: unknown[] = [];
  const off = await bus.subscribe('x', (m) => got.push(m));
  await bus.publish('x', { a: 1 });
  await new Promise((r) => setImmediate(r));
  await off();
  await bus.publish('x', { a: 2 });
  await new Promise((r) => setImmediate(r));
  t.same(got, [{ a: 1 }]);
  await bus.close();
});

t.test('two nodes on one database and one Redis', { skip: ONE_NODE_ONLY }, async (t) => {
  const first = await makeApp(t, { redis: { url: REDIS_URL }, tiers: { free: { rate_per_minute: 1, burst: 4 } } });
  const a = first.app;
  t.equal(a.svc.bus.kind, 'redis');
  const b = await buildApp(first.config);
  t.teardown(() => b.close());
  await b.ready();

  const acct = await activate(a);
  const extra = await a.inject({
    method: 'POST',
    url: '/v1/account/keys',
    headers: acct.auth,
    payload: { label: 'shared' },
  });
  const secret = extra.json().secret as string;
  const auth = { authorization: `Bearer ${secret}` };

  t.test('a revocation on one node reaches the other node at once', async (t) => {
    t.equal(
      (await b.inject({ method: 'GET', url: '/v1/account/balance', headers: auth })).statusCode,
      200,
      'node b caches the key'
    );
    const del = await a.inject({
      method: 'DELETE',
      url: `/v1/account/keys/${extra.json().key_id}`,
      headers: acct.auth,
    });
    t.equal(del.statusCode, 200);
    let status = 0;
    for (let i = 0; i < 50 && status !== 401; i++) {
      status = (await b.inject({ method: 'GET', url: '/v1/account/balance', headers: auth })).statusCode;
      if (status !== 401) await new Promise((r) => setTimeout(r, 10));
    }
    t.equal(status, 401);
  });

  t.test('the rate limit is one bucket across nodes', async (t) => {
    const codes: number[] = [];
    for (const app of [a, b, a, b, a])
      codes.push((await app.inject({ method: 'GET', url: '/v1/account/balance', headers: acct.auth })).statusCode);
    // The primary key spent 2 of its 4 tokens on node a above (activate needs no key, so it
    // does not count); a per-node bucket would let node b allow 4 more.
    t.same(codes, [200, 200, 429, 429, 429]);
  });
});
