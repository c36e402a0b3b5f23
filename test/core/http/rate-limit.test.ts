import t from 'tap';
import { RateLimiter } from '../../../core/http/rate-limit.js';
import { makeApp, activate } from '../../helpers/app.js';

// database-independent: the token bucket (in memory, or the bus: bus.test.ts's, on both).

t.test('token bucket: burst at once, then the refill rate', async (t) => {
  const r = new RateLimiter();
  const tier = { rate_per_minute: 60, burst: 3 };
  const t0 = 1_000_000;
  t.ok(r.take('k', tier, t0).allowed);
  t.ok(r.take('k', tier, t0).allowed);
  const third = r.take('k', tier, t0);
  t.ok(third.allowed);
  t.equal(third.remaining, 0);
  const refused = r.take('k', tier, t0);
  t.notOk(refused.allowed);
  t.equal(refused.retryAfterSeconds, 1);
  t.ok(r.take('k', tier, t0 + 1000).allowed, 'one token back after a second at 60/min');
  t.ok(r.take('other', tier, t0).allowed, 'buckets are per key');
});

t.test('429 with retry-after and ratelimit headers on every response', async (t) => {
  const { app } = await makeApp(t, { tiers: { free: { rate_per_minute: 60, burst: 2 } } });
  const a = await activate(app);
  const first = await app.inject({ method: 'GET', url: '/v1/account/balance', headers: a.auth });
  t.equal(first.statusCode, 200);
  t.equal(first.headers['ratelimit-limit'], '2');
  t.equal(first.headers['ratelimit-remaining'], '1');
  t.ok(first.headers['ratelimit-reset']);
  t.equal(first.headers['ratelimit-policy'], '60;w=60;burst=2');
  t.equal((await app.inject({ method: 'GET', url: '/v1/account/balance', headers: a.auth })).statusCode, 200);
  const third = await app.inject({ method: 'GET', url: '/v1/account/balance', headers: a.auth });
  t.equal(third.statusCode, 429);
  t.equal(third.json().error.code, 'rate_limited');
  t.equal(third.headers['retry-after'], '1');
  t.equal(third.headers['ratelimit-remaining'], '0');
});
