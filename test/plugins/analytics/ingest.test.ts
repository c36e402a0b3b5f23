import t from 'tap';
import { analyticsApp, eventCount, get, post } from './analytics-app.js';

// Track and identify: what is stored, deduplicated, refused whole, merged and charged.

t.test('track and identify', async (t) => {
  const { app, a, b } = await analyticsApp(t);

  t.test('one event or a list; a uuid sent again is stored once', async (t) => {
    const one = await post(app, a, '/v1/analytics/track', { event: 'signup', distinct_id: 'anon-1', uuid: 'u-1' });
    t.equal(one.statusCode, 200, one.body);
    t.same(one.json(), { ok: true, accepted: 1, duplicates: 0 });
    t.equal(Number(one.headers['x-svc-cost-usd']), 0, 'metered (free by default)');
    const list = await post(app, a, '/v1/analytics/track', [
      { event: 'signup', distinct_id: 'anon-1', uuid: 'u-1' },
      { event: 'view', distinct_id: 'anon-1', properties: { page: '/' }, timestamp: '2026-11-01T10:00:00.000Z' },
    ]);
    t.same(list.json(), { ok: true, accepted: 1, duplicates: 1 });
    t.equal(await eventCount(app, a.account_id), 2);
    const row = await app.svc.db
      .selectFrom('analytics_events')
      .selectAll()
      .where('account_id', '=', a.account_id)
      .where('event', '=', 'view')
      .executeTakeFirstOrThrow();
    t.equal(Number(row.ts), Date.parse('2026-11-01T10:00:00.000Z'));
    t.same(JSON.parse(row.properties), { page: '/' });
  });

  t.test('bad input is refused whole and stores nothing', async (t) => {
    const before = await eventCount(app, a.account_id);
    const many = Array.from({ length: 1001 }, (_, i) => ({ event: 'e', distinct_id: `d${i}` }));
    const r1 = await post(app, a, '/v1/analytics/track', many);
    t.equal(r1.statusCode, 413, r1.body);
    t.equal(r1.json().error.code, 'payload_too_large');
    const big = await post(app, a, '/v1/analytics/track', [
      { event: 'ok', distinct_id: 'd' },
      { event: 'big', distinct_id: 'd', properties: { blob: 'x'.repeat(1024 * 1024) } },
    ]);
    t.equal(big.statusCode, 413, 'a 1 MiB property');
    const wide = await post(app, a, '/v1/analytics/track', [
      { event: 'ok', distinct_id: 'd' },
      { event: 'big', distinct_id: 'd', properties: { blob: 'x'.repeat(70_000) } },
    ]);
    t.equal(wide.statusCode, 413, 'over max_event_bytes');
    t.equal(wide.json().error.param, '[1].properties');
    const time = await post(app, a, '/v1/analytics/track', [
      { event: 'ok', distinct_id: 'd' },
      { event: 'e', distinct_id: 'd', timestamp: 'yesterday' },
    ]);
    t.equal(time.statusCode, 400);
    t.equal(time.json().error.param, '[1].timestamp');
    const unknown = await post(app, a, '/v1/analytics/track', { event: 'e', distinct_id: 'd', extra: 1 });
    t.equal(unknown.statusCode, 400, 'unknown fields');
    const missing = await post(app, a, '/v1/analytics/track', { event: 'e' });
    t.equal(missing.statusCode, 400, 'no distinct_id');
    t.equal(await eventCount(app, a.account_id), before);
  });

  t.test('identify merges ids into one person, per account', async (t) => {
    const id = (distinct_id: string, user_id?: string, traits?: object) =>
      post(app, a, '/v1/analytics/identify', { distinct_id, user_id, traits });
    t.same((await id('anon-1', 'user-1', { plan: 'pro' })).json(), { ok: true });
    await id('anon-2', 'user-1');
    // anon-3 was a person others merged into; merging it moves them along.
    await id('anon-4', 'anon-3');
    await id('anon-3', 'user-1', { country: 'DE' });
    const p = (await get(app, a, '/v1/analytics/people/anon-4')).json();
    t.same(p, {
      person_id: 'user-1',
      distinct_ids: ['anon-1', 'anon-2', 'anon-3', 'anon-4', 'user-1'],
      traits: { plan: 'pro', country: 'DE' },
    });
    // An id already merged into an identified person stays there.
    await id('anon-1', 'user-2');
    t.equal((await get(app, a, '/v1/analytics/people/anon-1')).json().person_id, 'user-1');
    t.equal((await get(app, b, '/v1/analytics/people/anon-1')).statusCode, 404, "another account's person");
    t.equal((await get(app, a, '/v1/analytics/people/nobody')).statusCode, 404);
    t.equal((await post(app, a, '/v1/analytics/identify', { user_id: 'x' })).statusCode, 400);
  });

  t.test('a scope without analytics is 403', async (t) => {
    const k = await post(app, a, '/v1/account/keys', { label: 'mail only', scopes: ['email'] });
    const auth = { authorization: `Bearer ${k.json().secret ?? k.json().key}` };
    const r = await app.inject({
      method: 'POST',
      url: '/v1/analytics/track',
      headers: auth,
      payload: { event: 'e', distinct_id: 'd' },
    });
    t.equal(r.statusCode, 403, r.body);
  });
});

t.test('stored events are charged with the call; an account that cannot pay stores nothing', async (t) => {
  // 1,000 USD per 1,000 events: 1 USD an event, against the 5 USD of trial credit.
  const { app, a } = await analyticsApp(t, { price_per_1000_events_usd: 1000 });
  const r = await post(app, a, '/v1/analytics/track', [
    { event: 'e', distinct_id: 'd', uuid: '1' },
    { event: 'e', distinct_id: 'd', uuid: '2' },
  ]);
  t.equal(r.statusCode, 200, r.body);
  t.equal(Number(r.headers['x-svc-cost-usd']), 2);
  t.equal(Number(r.headers['x-svc-balance-usd']), 3);
  const again = await post(app, a, '/v1/analytics/track', [{ event: 'e', distinct_id: 'd', uuid: '1' }]);
  t.equal(Number(again.headers['x-svc-cost-usd']), 0, 'a duplicate is free');
  const over = await post(
    app,
    a,
    '/v1/analytics/track',
    Array.from({ length: 4 }, (_, i) => ({ event: 'e', distinct_id: 'd', uuid: `n${i}` }))
  );
  t.equal(over.statusCode, 402, over.body);
  t.equal(await eventCount(app, a.account_id), 2);
});

t.test('retention removes events older than retention_days by their time', async (t) => {
  const { app, a } = await analyticsApp(t, { retention_days: 30 });
  const old = new Date(Date.now() - 31 * 86_400_000).toISOString();
  await post(app, a, '/v1/analytics/track', [
    { event: 'old', distinct_id: 'd', timestamp: old },
    { event: 'new', distinct_id: 'd' },
  ]);
  const removed = await app.svc.retention.run();
  t.equal(removed.analytics_events, 1);
  t.equal(await eventCount(app, a.account_id), 1);
});
