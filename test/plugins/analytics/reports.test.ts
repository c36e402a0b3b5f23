import t from 'tap';
import { analyticsApp, post } from './analytics-app.js';
import { cohortRef, funnelRef, type Ev } from './reference.js';

// Funnels and cohorts from the gateway against the plain computation of reference.ts, over the
// same generated events: anonymous ids merged into users, ties in time, repeated step names,
// several windows, groups and filters.

const DAY = 86_400_000;
const START = Date.UTC(2026, 10, 2);
const NAMES = ['view', 'signup', 'activate', 'buy'];

function rng(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0), s / 2 ** 32);
}

/** 60 people over 40 days; every third browses anonymously first and is identified later. */
function generate() {
  const rand = rng(7);
  const events: Ev[] = [];
  const merges = new Map<string, string>();
  for (let p = 0; p < 60; p++) {
    const user = `user-${p}`;
    const anon = p % 3 === 0 ? `anon-${p}` : undefined;
    if (anon) merges.set(anon, user);
    if (p % 9 === 0) merges.set(`anon-b${p}`, user); // a second device
    const plan = p % 4 === 0 ? 'pro' : p % 4 === 1 ? 'free' : p % 4 === 2 ? 7 : undefined;
    let ts = START + Math.floor(rand() * 40 * DAY);
    for (let i = 0; i < 15; i++) {
      // Whole minutes apart or none at all: ties in time happen.
      ts += Math.floor(rand() * 3) * 60_000 * Math.floor(rand() * 600);
      const ids = [user, anon ?? user, p % 9 === 0 ? `anon-b${p}` : user];
      events.push({
        event: NAMES[Math.floor(rand() * NAMES.length)]!,
        distinct_id: ids[Math.floor(rand() * ids.length)]!,
        ts,
        properties: plan === undefined ? { n: i } : { plan, n: i, country: p % 2 ? 'DE' : 'FR' },
      });
    }
  }
  return { events, merges };
}

t.test('funnel and cohort equal the in-memory computation', async (t) => {
  const { app, a, b } = await analyticsApp(t);
  const { events, merges } = generate();
  for (let i = 0; i < events.length; i += 500) {
    const batch = events
      .slice(i, i + 500)
      .map((e) => ({ ...e, timestamp: new Date(e.ts).toISOString(), ts: undefined }));
    const r = await post(app, a, '/v1/analytics/track', batch);
    t.equal(r.statusCode, 200, r.body);
  }
  for (const [anon, user] of merges)
    t.equal((await post(app, a, '/v1/analytics/identify', { distinct_id: anon, user_id: user })).statusCode, 200);
  const personOf = (d: string) => merges.get(d) ?? d;
  const iso = (ms: number) => new Date(ms).toISOString();

  const funnels = [
    { steps: ['view', 'signup', 'activate', 'buy'], from: START, to: START + 45 * DAY, windowMs: 14 * DAY },
    { steps: ['view', 'signup', 'buy'], from: START + 5 * DAY, to: START + 30 * DAY, windowMs: 3600_000 },
    { steps: ['view', 'view', 'buy', 'view'], from: START, to: START + 45 * DAY, windowMs: 2 * DAY },
    { steps: ['signup', 'buy'], from: START, to: START + 45 * DAY, windowMs: 7 * DAY, groupBy: 'plan' },
    { steps: ['buy'], from: START, to: START + 45 * DAY, windowMs: DAY, groupBy: 'country' },
  ];
  for (const q of funnels) {
    const body: Record<string, unknown> = {
      steps: q.steps,
      from: iso(q.from),
      to: iso(q.to),
      window_seconds: q.windowMs / 1000,
    };
    if (q.groupBy) body.group_by = q.groupBy;
    const res = await post(app, a, '/v1/analytics/funnel', body);
    t.equal(res.statusCode, 200, res.body);
    const want = funnelRef(events, personOf, q);
    const got = res.json();
    t.same(got.steps, want.total, `funnel ${q.steps.join(' → ')}`);
    t.ok(
      (got.steps[0].count > 0 && got.steps.at(-1).count < got.steps[0].count) || q.steps.length === 1,
      'not trivial'
    );
    if (q.groupBy) {
      t.same(new Map(got.groups.map((g: any) => [g.value, g.steps])), want.groups, `groups by ${q.groupBy}`);
      t.ok(got.groups.length >= 2);
    }
  }
  const merged = funnelRef(events, (d) => d, funnels[0]!);
  t.not(
    merged.total[0]!.count,
    (
      await post(app, a, '/v1/analytics/funnel', {
        steps: funnels[0]!.steps,
        from: iso(START),
        to: iso(START + 45 * DAY),
      })
    ).json().steps[0].count,
    'identify changed who is counted'
  );

  const cohorts = [
    { event: 'view', filter: {}, period: 'day', from: START + 3 * DAY, to: START + 13 * DAY + 5 },
    { event: 'buy', filter: { plan: 'pro' }, period: 'week', from: START, to: START + 40 * DAY },
    { event: 'signup', filter: { plan: 7, country: 'FR' }, period: 'week', from: START, to: START + 40 * DAY },
    { event: 'view', filter: {}, period: 'month', from: Date.UTC(2026, 9, 31), to: Date.UTC(2027, 0, 15) },
  ];
  for (const c of cohorts) {
    const res = await post(app, a, '/v1/analytics/cohort', {
      definition: { event: c.event, filter: c.filter },
      from: iso(c.from),
      to: iso(c.to),
      period: c.period,
    });
    t.equal(res.statusCode, 200, res.body);
    const got = res.json().buckets;
    const bounds = [...got.map((x: any) => Date.parse(x.start)), c.to];
    t.same(
      got.map((x: any) => x.bucket),
      got.map((_: unknown, k: number) => k)
    );
    t.same(
      got.map((x: any) => x.size),
      cohortRef(events, personOf, { ...c, bounds }),
      `cohort ${c.event} by ${c.period}`
    );
    t.ok(got[0].size > 0, 'not empty');
  }
  // Month periods are calendar months from `from`, the day clamped: 31 Oct, 30 Nov, 31 Dec, 31 Jan.
  const months = await post(app, a, '/v1/analytics/cohort', {
    definition: { event: 'view' },
    from: iso(Date.UTC(2026, 9, 31)),
    to: iso(Date.UTC(2027, 1, 1)),
    period: 'month',
  });
  t.same(
    months.json().buckets.map((x: any) => x.start.slice(0, 10)),
    ['2026-10-31', '2026-11-30', '2026-12-31', '2027-01-31']
  );

  t.test('another account sees none of it', async (t) => {
    const r = await post(app, b, '/v1/analytics/funnel', {
      steps: ['view'],
      from: iso(START),
      to: iso(START + 45 * DAY),
    });
    t.same(r.json().steps, [{ event: 'view', count: 0, conversion_pct: 0 }]);
  });

  t.test('bad ranges are 400', async (t) => {
    const back = await post(app, a, '/v1/analytics/funnel', {
      steps: ['view'],
      from: iso(START + DAY),
      to: iso(START),
    });
    t.equal(back.statusCode, 400);
    t.equal(back.json().error.param, 'to');
    const c = await post(app, a, '/v1/analytics/cohort', {
      definition: { event: 'view' },
      from: iso(START),
      to: iso(START),
    });
    t.equal(c.statusCode, 400);
    const long = await post(app, a, '/v1/analytics/cohort', {
      definition: { event: 'view' },
      from: iso(START),
      to: iso(START + 500 * DAY),
      period: 'day',
    });
    t.equal(long.statusCode, 400, 'over 400 periods');
    const quote = await post(app, a, '/v1/analytics/funnel', {
      steps: ['view'],
      from: iso(START),
      to: iso(START + DAY),
      group_by: 'a"b',
    });
    t.equal(quote.statusCode, 400);
    const steps = await post(app, a, '/v1/analytics/funnel', { steps: [], from: iso(START), to: iso(START + DAY) });
    t.equal(steps.statusCode, 400);
  });
});
