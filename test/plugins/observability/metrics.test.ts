import t from 'tap';
import { obsApp, post, get, rowCount } from './obs-app.js';

// Events and metrics: stored as sent, all or nothing; metric queries checked against a plain
// in-memory computation over the same points; the Prometheus scrape as text.

const T0 = Date.parse('2026-11-02T10:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

function expected(points: { value: number; ts: number; tags: Record<string, string> }[], agg: string, step: number) {
  const groups = new Map<string, Map<number, number[]>>();
  for (const p of points) {
    const key = JSON.stringify(p.tags);
    const b = Math.floor((p.ts - T0) / (step * 1000));
    const g = groups.get(key) ?? new Map<number, number[]>();
    groups.set(key, g.set(b, [...(g.get(b) ?? []), p.value]));
  }
  const q = (vs: number[], f: number) => {
    const s = [...vs].sort((a, b) => a - b);
    const at = (s.length - 1) * f;
    return s[Math.floor(at)] + (s[Math.ceil(at)] - s[Math.floor(at)]) * (at - Math.floor(at));
  };
  const fold: Record<string, (vs: number[]) => number> = {
    sum: (vs) => vs.reduce((a, b) => a + b, 0),
    count: (vs) => vs.length,
    avg: (vs) => vs.reduce((a, b) => a + b, 0) / vs.length,
    min: (vs) => Math.min(...vs),
    max: (vs) => Math.max(...vs),
    p50: (vs) => q(vs, 0.5),
    p95: (vs) => q(vs, 0.95),
  };
  return [...groups.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, g]) => ({
      tags: JSON.parse(k),
      points: [...g.entries()]
        .sort(([a], [b]) => a - b)
        .map(([b, vs]) => ({ t: iso(T0 + b * step * 1000), value: fold[agg](vs) })),
    }));
}

t.test('events and metrics', async (t) => {
  const { app, a, b } = await obsApp(t);

  t.test('events are stored and read back', async (t) => {
    const res = await post(app, a, '/v1/observability/events', {
      event: 'signup',
      distinct_id: 'u1',
      properties: { plan: 'pro', seats: 3 },
    });
    t.same(res.json(), { ok: true });
    t.same((await post(app, a, '/v1/observability/events', { event: 'login' })).json(), { ok: true });
    const list = (await get(app, a, '/v1/observability/events?event=signup')).json();
    t.match(list.items, [{ event: 'signup', distinct_id: 'u1', properties: { plan: 'pro', seats: 3 } }]);
    t.equal((await get(app, a, '/v1/observability/events')).json().items.length, 2);
    t.equal((await get(app, b, '/v1/observability/events')).json().items.length, 0, 'per account');
    const big = await post(app, a, '/v1/observability/events', { event: 'x', properties: { p: 'x'.repeat(40_000) } });
    t.equal(big.statusCode, 413);
    t.equal((await post(app, a, '/v1/observability/events', { properties: {} })).statusCode, 400);
    t.equal(await rowCount(app, 'obs_events'), 2);
  });

  // Points over 5 minutes, two regions, values from a fixed sequence.
  const points = Array.from({ length: 240 }, (_, i) => ({
    name: 'http.latency_ms',
    value: ((i * 37) % 101) + (i % 3) * 0.5,
    tags: { region: i % 2 ? 'eu' : 'us', route: i % 3 ? '/a' : '/b' },
    ts: T0 + i * 1250,
  }));

  t.test('one point or a list; queried per bucket and tag set', async (t) => {
    const one = points[0];
    t.same(
      (await post(app, a, '/v1/observability/metrics', { ...one, ts: undefined, timestamp: iso(one.ts) })).json(),
      { ok: true }
    );
    const rest = points.slice(1).map((p) => ({ name: p.name, value: p.value, tags: p.tags, timestamp: iso(p.ts) }));
    t.same((await post(app, a, '/v1/observability/metrics', rest)).json(), { ok: true });
    await post(app, a, '/v1/observability/metrics', { name: 'other', value: 1, timestamp: iso(T0) });
    for (const agg of ['sum', 'avg', 'min', 'max', 'p50', 'p95', 'count']) {
      const url = `/v1/observability/metrics?name=http.latency_ms&from=${iso(T0)}&to=${iso(T0 + 300_000)}&step=60&agg=${agg}`;
      const res = await get(app, a, url);
      t.equal(res.statusCode, 200, agg);
      const got = res.json();
      t.match(got, { name: 'http.latency_ms', agg, step: 60 });
      const want = expected(points, agg, 60);
      t.equal(got.series.length, 4, `${agg}: a series per tag set`);
      for (let s = 0; s < want.length; s++) {
        t.same(got.series[s].tags, want[s].tags);
        t.same(
          got.series[s].points.map((p: any) => p.t),
          want[s].points.map((p) => p.t)
        );
        for (const [i, p] of got.series[s].points.entries())
          t.ok(Math.abs(p.value - want[s].points[i].value) < 1e-9, `${agg} ${s} ${i}`);
      }
    }
    const grouped = (
      await get(
        app,
        a,
        `/v1/observability/metrics?name=http.latency_ms&from=${iso(T0)}&to=${iso(T0 + 300_000)}&step=300&agg=sum&group_by=region`
      )
    ).json();
    const byRegion = expected(
      points.map((p) => ({ ...p, tags: { region: p.tags.region } })),
      'sum',
      300
    );
    t.same(
      grouped.series.map((s: any) => s.tags),
      [{ region: 'eu' }, { region: 'us' }]
    );
    t.ok(Math.abs(grouped.series[0].points[0].value - byRegion[0].points[0].value) < 1e-9);
    const none = await get(
      app,
      b,
      `/v1/observability/metrics?name=http.latency_ms&from=${iso(T0)}&to=${iso(T0 + 300_000)}`
    );
    t.same(none.json().series, [], "another account's points are not in its queries");
  });

  t.test('bad input: 4xx, nothing stored', async (t) => {
    const before = await rowCount(app, 'obs_metrics');
    const p = { name: 'm', value: 1 };
    const many = await post(
      app,
      a,
      '/v1/observability/metrics',
      Array.from({ length: 1001 }, () => p)
    );
    t.equal(many.statusCode, 413);
    t.equal(many.json().error.code, 'payload_too_large');
    t.equal(
      (
        await post(
          app,
          a,
          '/v1/observability/metrics',
          Array.from({ length: 1000 }, () => p)
        )
      ).statusCode,
      200
    );
    const after1000 = await rowCount(app, 'obs_metrics');
    t.equal(after1000, before + 1000, 'a list of 1,000 is accepted');
    for (const bad of [
      { name: 'm', value: '12' },
      [p, { name: 'm', value: 'x' }],
      { name: 'm' },
      { name: 'bad name', value: 1 },
      { name: 'm', value: 1, tags: { t: 2 } },
      [],
    ]) {
      const res = await post(app, a, '/v1/observability/metrics', bad);
      t.equal(res.statusCode, 400, JSON.stringify(bad));
    }
    t.equal(await rowCount(app, 'obs_metrics'), after1000, 'a list with one bad point stores none of it');
    const q = (qs: string) => get(app, a, `/v1/observability/metrics?name=m&${qs}`);
    const backwards = await q(`from=${iso(T0 + 1000)}&to=${iso(T0)}`);
    t.equal(backwards.statusCode, 400);
    t.equal(backwards.json().error.param, 'to');
    t.equal((await q(`from=${iso(T0)}&to=${iso(T0 + 86_400_000)}&step=1`)).statusCode, 400, 'too many buckets');
    t.equal((await q(`from=${iso(T0)}&to=${iso(T0 + 1000)}&agg=median`)).statusCode, 400);
    t.equal((await q(`from=yesterday&to=${iso(T0)}`)).statusCode, 400);
  });

  t.test('Prometheus scrape: the newest point of each series, in the text format', async (t) => {
    const now = Date.now();
    await post(app, b, '/v1/observability/metrics', [
      { name: 'queue.depth', value: 4, tags: { queue: 'mail' }, timestamp: iso(now - 2000) },
      { name: 'queue.depth', value: 7, tags: { queue: 'mail' }, timestamp: iso(now - 1000) },
      { name: 'queue.depth', value: 1.5, tags: { queue: 'a "b"\\c' }, timestamp: iso(now - 1000) },
      { name: 'up', value: 1, timestamp: iso(now - 1000) },
      { name: 'stale', value: 1, timestamp: iso(now - 7200_000) },
    ]);
    const res = await get(app, b, '/v1/observability/metrics/prometheus');
    t.equal(res.statusCode, 200);
    t.match(res.headers['content-type'], /^text\/plain; version=0\.0\.4/);
    t.equal(
      res.body,
      [
        '# TYPE queue_depth gauge',
        `queue_depth{queue="a \\"b\\"\\\\c"} 1.5 ${now - 1000}`,
        `queue_depth{queue="mail"} 7 ${now - 1000}`,
        '# TYPE up gauge',
        `up 1 ${now - 1000}`,
        '',
      ].join('\n')
    );
    t.equal((await app.inject({ method: 'GET', url: '/v1/observability/metrics/prometheus' })).statusCode, 401);
  });

  t.test('retention', async (t) => {
    // Cutoffs are whole UTC days: 30 days before the day T0 + 31 days falls in.
    const removed = await app.svc.retention.run(T0 + 31 * 86_400_000);
    t.equal(removed.observability_metrics, 241, 'the 240 points and "other" of T0, not the recent ones');
    t.equal(removed.observability_events, 0, 'events written now are younger than 30 days');
  });
});
