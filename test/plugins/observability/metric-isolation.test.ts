import t from 'tap';
import { sql } from 'kysely';
import { begunTasks, runningTasks } from '../../../core/kit/area.js';
import { MetricQueries } from '../../../plugins/observability/metric-query.js';
import { DIALECT } from '../../helpers/app.js';
import { until } from '../../helpers/wait.js';
import { get, obsApp } from './obs-app.js';

// A percentile over a large range runs off the event loop: on SQLite in the metric worker
// threads, on PostgreSQL in the server. Another account's light call (a balance read) answers
// while it runs; the answer is the documented quantile; a query past its timeout is stopped (422).

const T0 = Date.parse('2026-11-02T10:00:00.000Z');
const N = 100_000;
const iso = (ms: number) => new Date(ms).toISOString();
const value = (i: number) => ((i * 7919) % 100_003) / 7 + (i % 5) * 0.25;

/** numpy's default quantile, written out again (the area's own is what is checked). */
function quantile(values: number[], q: number): number {
  const s = [...values].sort((a, b) => a - b);
  const at = (s.length - 1) * q;
  return s[Math.floor(at)] + (s[Math.ceil(at)] - s[Math.floor(at)]) * (at - Math.floor(at));
}

t.test('a big percentile query runs off the event loop', async (t) => {
  const { app, a, b } = await obsApp(t, { plugins: { observability: { max_percentile_points: N } } });
  // N points over one hour, two regions, written straight to the table (the API takes 1,000 a call).
  const rows = Array.from({ length: N }, (_, i) => ({
    point_id: `mp_big${i}`,
    account_id: a.account_id,
    name: 'big',
    value: value(i),
    tags: JSON.stringify({ region: i % 2 ? 'eu' : 'us' }),
    ts: T0 + Math.floor((i * 3_600_000) / N),
  }));
  for (let i = 0; i < N; i += 5000)
    await app.svc.db
      .insertInto('obs_metrics')
      .values(rows.slice(i, i + 5000))
      .execute();
  const url = (agg: string, extra = '') =>
    `/v1/observability/metrics?name=big&from=${iso(T0)}&to=${iso(T0 + 3_600_000)}&step=1800&agg=${agg}${extra}`;
  const want = (q: number, region?: string) =>
    [0, 1].map((half) =>
      quantile(
        rows
          .filter((r, i) => (region ? r.tags.includes(region) : true) && Math.floor(i / (N / 2)) === half)
          .map((r) => r.value),
        q
      )
    );

  t.test('a balance read answers while the percentile runs', async (t) => {
    // On PostgreSQL the query is held on a lock the test takes, so "while it runs" is certain;
    // on SQLite it is the worker's read and sort of N points, a thread the event loop waits on.
    let release = () => {};
    const locked =
      DIALECT === 'postgres'
        ? new Promise<void>((taken) => {
            void app.svc.db.transaction().execute(async (trx) => {
              await sql`lock table obs_metrics in access exclusive mode`.execute(trx);
              taken();
              await new Promise<void>((r) => (release = r));
            });
          })
        : Promise.resolve();
    await locked;
    let settled = false;
    const begun = begunTasks('observability-metrics');
    const big = get(app, a, url('p95', '&group_by=region')).finally(() => (settled = true));
    const running = async () =>
      DIALECT === 'postgres'
        ? Number(
            // This schema's table (the search path's), whatever other tests on the server wait for.
            (
              await sql<{ n: number }>`select count(*) as n from pg_locks
                where not granted and relation = 'obs_metrics'::regclass`.execute(app.svc.db)
            ).rows[0].n
          ) > 0
        : runningTasks('observability-metrics') > 0;
    // On SQLite the thread may finish before a poll sees it on a busy machine: what must hold is that it ran there.
    await until('the percentile query to be running', async () =>
      DIALECT === 'postgres' ? running() : settled || (await running())
    );
    if (DIALECT !== 'postgres') t.ok(begunTasks('observability-metrics') > begun, 'the query ran in a worker thread');
    const balance = await get(app, b, '/v1/account/balance');
    t.equal(balance.statusCode, 200, 'the balance read answers');
    if (DIALECT === 'postgres') {
      // Held by the lock, so certain; on SQLite the thread may finish first on a busy machine, and what holds
      // there is that the query was running in the pool (not on the loop) when the read was sent.
      t.notOk(settled, 'before the percentile query is over');
      t.ok(await running(), 'which was still running');
    }
    release();
    const res = await big;
    t.equal(res.statusCode, 200);
    const got = res.json().series;
    t.same(
      got.map((s: any) => s.tags),
      [{ region: 'eu' }, { region: 'us' }]
    );
    t.same(
      got[0].points.map((p: any) => p.value),
      want(0.95, 'eu'),
      'p95 of each half hour, as numpy computes it'
    );
    t.same(
      got[1].points.map((p: any) => p.value),
      want(0.95, 'us')
    );
    const p50 = (await get(app, a, url('p50', '&group_by=nothing'))).json().series;
    t.same(p50, [{ tags: {}, points: [0, 1].map((h) => ({ t: iso(T0 + h * 1_800_000), value: want(0.5)[h] })) }]);
  });

  t.test('a query past its timeout is stopped: 422, and the next one answers', async (t) => {
    const queries = new MetricQueries(app.svc.db, app.svc, {
      maxBuckets: 10_000,
      maxPercentilePoints: N,
      threads: 1,
      timeoutMs: 1,
    });
    t.teardown(() => queries.close());
    const q = { name: 'big', from: iso(T0), to: iso(T0 + 3_600_000), step: 1800, agg: 'p95' as const };
    const err = await queries.query(a.account_id, q).catch((e) => e);
    t.match(err, { code: 'unprocessable', status: 422, param: 'from', message: /ran past 0\.001 s/ });
    const res = await get(app, a, url('p95'));
    t.equal(res.statusCode, 200, "the gateway's own queries go on");
    t.same(
      res.json().series[0].points.map((p: any) => p.value),
      want(0.95, 'eu'),
      'a series per tag set'
    );
  });
});
