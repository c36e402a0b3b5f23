import t from 'tap';
import { listeningApp } from '../../helpers/listening-app.js';
import { activate } from '../../helpers/app.js';
import { eventCount, get, post } from './analytics-app.js';

// Capture calls count against the tier's capture rate (plugins.analytics.capture_rate_limits),
// in a bucket per account of their own, shared by POST /v1/analytics/track and PostHog's
// capture paths; over it: 429, Retry-After, the conventions' error shape, nothing stored.
// The rate refills about once in 17 hours here, so no refill can happen while the test runs.

t.test('capture rate limits per tier', async (t) => {
  const { app } = await listeningApp(t, {
    tiers: {
      free: { rate_per_minute: 1_000_000, burst: 100_000, price_usd: 0 },
      pro: { rate_per_minute: 1_000_000, burst: 100_000, price_usd: 20 },
    },
    plugins: { analytics: { capture_rate_limits: { free: { rate_per_minute: 0.001, burst: 3 } } } },
  });
  const a = await activate(app);
  const b = await activate(app);
  const pk = (await get(app, a, '/v1/analytics/public-key')).json();
  const track = (who = a) => post(app, who, '/v1/analytics/track', { event: 'view', distinct_id: 'd' });
  const capture = () =>
    fetch(`${pk.host}/batch/`, {
      method: 'POST',
      body: JSON.stringify({ api_key: pk.public_key, batch: [{ event: 'view', distinct_id: 'd' }] }),
    });

  t.equal((await track()).statusCode, 200);
  t.equal((await track()).statusCode, 200);
  t.equal((await capture()).status, 200, 'PostHog capture spends the same bucket');
  const over = await track();
  t.equal(over.statusCode, 429);
  t.ok(Number(over.headers['retry-after']) > 0, 'Retry-After in seconds');
  t.match(over.json(), {
    error: { code: 'rate_limited', message: /free tier's capture rate of 0.001 calls a minute/ },
  });
  const overPh = await capture();
  t.equal(overPh.status, 429);
  t.ok(Number(overPh.headers.get('retry-after')) > 0);
  t.equal(overPh.headers.get('access-control-allow-origin'), '*', 'a page can read why');
  t.match(await overPh.json(), { error: { code: 'rate_limited' } });
  t.equal(await eventCount(app, a.account_id), 3, 'nothing stored over the limit');
  t.equal((await get(app, a, '/v1/analytics/public-key')).statusCode, 200, 'other API calls are not limited');
  const flags = () =>
    fetch(`${pk.host}/flags/?v=2`, {
      method: 'POST',
      body: JSON.stringify({ token: pk.public_key, distinct_id: 'd' }),
    });
  for (let i = 0; i < 3; i++) t.equal((await flags()).status, 200, 'flags calls have a bucket of their own');
  t.equal((await flags()).status, 429, 'at the same rate');
  t.equal((await track(b)).statusCode, 200, 'another account has its own bucket');

  await app.svc.db.updateTable('accounts').set({ tier: 'pro' }).where('account_id', '=', a.account_id).execute();
  app.svc.keys.dropAccount(a.account_id);
  t.equal((await track()).statusCode, 200, 'a tier not listed has its API rate');
});
