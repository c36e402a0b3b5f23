import t from 'tap';
import { gzipSync } from 'node:zlib';
import { PostHog } from 'posthog-node';
import { activate } from '../../helpers/app.js';
import { listeningApp } from '../../helpers/listening-app.js';
import { eventCount, get, post } from './analytics-app.js';

// posthog-node pointed at the gateway: gzip batches land as events, $identify merges, and a
// funnel over them counts what was sent. The key is the account's public one, never its project key.

t.test('posthog-node capture and identify, then a funnel', async (t) => {
  const { app, base } = await listeningApp(t);
  const a = await activate(app);
  const pk = (await get(app, a, '/v1/analytics/public-key')).json();
  t.match(pk, { public_key: /^phc_\w{43}$/, host: `${base}/v1/analytics/posthog` });
  t.equal((await get(app, a, '/v1/analytics/public-key')).json().public_key, pk.public_key, 'one key an account');
  const ph = new PostHog(pk.public_key, { host: pk.host, flushAt: 100, flushInterval: 0 });
  const T = Date.parse('2026-11-10T10:00:00.000Z');
  const at = (m: number) => new Date(T + m * 60_000);
  // Three anonymous visitors; two sign up and are identified; one of them buys.
  for (const v of ['anon-1', 'anon-2', 'anon-3']) ph.capture({ distinctId: v, event: 'view', timestamp: at(0) });
  ph.capture({ distinctId: 'anon-1', event: 'signup', timestamp: at(1) });
  ph.capture({ distinctId: 'anon-2', event: 'signup', timestamp: at(2) });
  ph.identify({ distinctId: 'user-1', properties: { $anon_distinct_id: 'anon-1', plan: 'pro' } });
  ph.identify({ distinctId: 'user-2', properties: { $anon_distinct_id: 'anon-2' } });
  ph.capture({ distinctId: 'user-1', event: 'buy', timestamp: at(3), properties: { amount: 9 } });
  await ph.shutdown();
  t.equal(await eventCount(app, a.account_id), 8, 'six captures and two $identify');
  const person = (await get(app, a, '/v1/analytics/people/anon-1')).json();
  t.same(person, { person_id: 'user-1', distinct_ids: ['anon-1', 'user-1'], traits: { plan: 'pro' } });
  const f = await post(app, a, '/v1/analytics/funnel', {
    steps: ['view', 'signup', 'buy'],
    from: '2026-11-10T00:00:00.000Z',
    to: '2026-11-11T00:00:00.000Z',
  });
  t.same(f.json().steps, [
    { event: 'view', count: 3, conversion_pct: 100 },
    { event: 'signup', count: 2, conversion_pct: 66.67 },
    { event: 'buy', count: 1, conversion_pct: 33.33 },
  ]);

  t.test('the wire: gzip, preflights from any origin, keys', async (t) => {
    const url = `${pk.host}/i/v0/e/`;
    const body = gzipSync(JSON.stringify({ api_key: pk.public_key, event: 'x', distinct_id: 'd', uuid: 'w-1' }));
    const ok = await fetch(`${url}?compression=gzip-js`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'text/plain' },
    });
    t.same(await ok.json(), { status: 1 });
    t.equal(ok.headers.get('access-control-allow-origin'), '*');
    const pre = await fetch(`${pk.host}/batch/`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://shop.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    t.equal(pre.status, 204);
    t.equal(pre.headers.get('access-control-allow-origin'), '*');
    const before = await eventCount(app, a.account_id);
    const secret = await fetch(`${pk.host}/batch/`, {
      method: 'POST',
      body: JSON.stringify({ api_key: a.key, batch: [{ event: 'x', distinct_id: 'd' }] }),
    });
    t.equal(secret.status, 401, 'the project key is not a capture key');
    const many = await fetch(`${pk.host}/batch/`, {
      method: 'POST',
      body: JSON.stringify({
        api_key: pk.public_key,
        batch: Array.from({ length: 1001 }, () => ({ event: 'x', distinct_id: 'd' })),
      }),
    });
    t.equal(many.status, 413);
    const bad = await fetch(`${pk.host}/batch/`, { method: 'POST', body: gzipSync('not json') });
    t.equal(bad.status, 400);
    t.equal(await eventCount(app, a.account_id), before, 'nothing stored');
  });
});
