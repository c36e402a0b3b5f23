// The scheduling bench: signed webhook deliveries a second to a loopback receiver, cron
// lateness p99, and queue publish→deliver throughput against pg-boss on the same PostgreSQL
// in the same run. Run it with `npm run bench -- scheduling`; see BENCHMARKS.md, `scheduling`.
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import PgBoss from 'pg-boss';
import { activate, api, cleanup, freshSchema, pool, receiver, startGateway, tempDir, until } from './support.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 5000);
const CRON_JOBS = Number(process.env.BENCH_CRON_JOBS ?? 20);
const CRON_SECONDS = Number(process.env.BENCH_CRON_SECONDS ?? 15);
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 3000);
const PG_URL =
  process.env.BENCH_DATABASE_URL ?? process.env.SVC_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const WIDTH = 16; // concurrent API calls while loading
const fmt = (n, d = 0) => n.toFixed(d);

const base = (dir, database) => ({
  data_dir: dir,
  database,
  egress: { allow_private: true },
  limits: { activate_per_hour: 1000 },
  tiers: { free: { rate_per_minute: 100_000_000, burst: 10_000_000, price_usd: 0 } },
  jobs: { stop_grace_ms: 0, poll_ms: 100 },
});

function line(name, figure, anchor, ratio, goal, ok) {
  process.stdout.write(
    `target ${name}: ${figure} vs ${anchor} → ${fmt(ratio, 2)}× (goal ${goal}) ${ok ? 'ok' : 'short'}\n`
  );
}

/**
 * Deliveries a second: load a backlog while the receiver holds every request, stop the
 * gateway (it releases what it holds), start it again and time the backlog draining.
 */
async function deliveries() {
  const dir = tempDir();
  let draining = false;
  const seen = new Set();
  let first = 0;
  let last = 0;
  const rx = await receiver((h) => {
    if (!draining) return;
    const id = h.headers['webhook-id'];
    if (seen.has(id)) return;
    seen.add(id);
    last = h.at;
    if (!first) first = h.at;
  });
  rx.hold();
  const cfg = base(dir, { url: `sqlite:${join(dir, 'gateway.db')}` });
  const loader = await startGateway(root, dir, cfg, 'loader');
  const key = await activate(loader.base);
  const c = api(loader.base, key);
  const t0 = Date.now();
  await pool(DELIVERIES, WIDTH, (n) =>
    c.post('/v1/scheduling/webhook/send', { url: `${rx.url}/hook`, payload: { n, text: 'a webhook of ordinary size' } })
  );
  process.stdout.write(
    `deliveries: ${DELIVERIES} sends accepted in ${Date.now() - t0} ms (${fmt(DELIVERIES / ((Date.now() - t0) / 1000))}/s through the API)\n`
  );
  loader.child.kill('SIGTERM');
  await loader.exited;
  draining = true;
  rx.release();
  const gw = await startGateway(root, dir, cfg, 'drainer');
  await until('the backlog to drain', () => seen.size >= DELIVERIES, 300_000);
  gw.child.kill('SIGTERM');
  await gw.exited;
  const rate = DELIVERIES / Math.max(0.001, (last - first) / 1000);
  process.stdout.write(
    `deliveries: ${DELIVERIES} signed deliveries in ${last - first} ms from the first to the last\n`
  );
  return rate;
}

/** Lateness of cron runs: when each run reached the receiver, against its slot. */
async function cronLateness() {
  const dir = tempDir();
  const arrivals = new Map();
  const rx = await receiver((h) => {
    const id = h.headers['webhook-id'];
    if (!arrivals.has(id)) arrivals.set(id, h.at);
  });
  const gw = await startGateway(root, dir, base(dir, { url: `sqlite:${join(dir, 'gateway.db')}` }), 'cron');
  const c = api(gw.base, await activate(gw.base));
  const ids = [];
  for (let i = 0; i < CRON_JOBS; i++)
    ids.push(
      (
        await c.post('/v1/scheduling/cron', {
          name: `bench ${i}`,
          schedule: '* * * * * *',
          url: `${rx.url}/cron`,
          payload: { i },
        })
      ).cron_id
    );
  await new Promise((r) => setTimeout(r, CRON_SECONDS * 1000));
  for (const id of ids) await c.patch(`/v1/scheduling/cron/${id}`, { enabled: false });
  const late = [];
  for (const id of ids) {
    const runs = (await c.get(`/v1/scheduling/cron/${id}/runs?limit=200`)).items;
    for (const r of runs) if (arrivals.has(r.run_id)) late.push(arrivals.get(r.run_id) - Date.parse(r.scheduled_for));
  }
  gw.child.kill('SIGTERM');
  await gw.exited;
  late.sort((a, b) => a - b);
  const q = (p) => late[Math.min(late.length - 1, Math.ceil(p * late.length) - 1)];
  process.stdout.write(
    `cron: ${late.length} runs of ${CRON_JOBS} every-second jobs over ${CRON_SECONDS} s; lateness p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${late[late.length - 1]} ms\n`
  );
  return q(0.99);
}

/** Publish→deliver: the gateway's queue with a push subscription, and pg-boss with workers, to the same receiver. */
async function queueVsPgBoss() {
  const got = { gateway: new Set(), pgboss: new Set() };
  const done = { gateway: 0, pgboss: 0 };
  const rx = await receiver((h) => {
    const who = h.url === '/gateway' ? 'gateway' : 'pgboss';
    const id = h.headers['webhook-id'] ?? h.headers['x-job-id'];
    got[who].add(id);
    if (got[who].size === MESSAGES) done[who] = h.at;
  });

  const dir = tempDir();
  const gwSchema = await freshSchema(PG_URL, 'bench_gw');
  const gw = await startGateway(root, dir, base(dir, { url: gwSchema.url, pool_size: 20 }), 'queue');
  const c = api(gw.base, await activate(gw.base));
  await c.post('/v1/scheduling/queue/bench/subscriptions', { url: `${rx.url}/gateway` });
  const g0 = Date.now();
  await pool(MESSAGES, WIDTH, (n) => c.post('/v1/scheduling/queue/publish', { queue: 'bench', payload: { n } }));
  const gPublished = Date.now() - g0;
  await until('gateway deliveries', () => done.gateway > 0, 300_000);
  const gRate = MESSAGES / ((done.gateway - g0) / 1000);
  process.stdout.write(
    `queue: gateway published ${MESSAGES} in ${gPublished} ms (HTTP API), all delivered after ${done.gateway - g0} ms: ${fmt(gRate)}/s\n`
  );
  gw.child.kill('SIGTERM');
  await gw.exited;
  await gwSchema.drop();

  const bossSchema = await freshSchema(PG_URL, 'bench_boss');
  const boss = new PgBoss({ connectionString: PG_URL, schema: bossSchema.schema, max: 20 });
  boss.on('error', (e) => process.stderr.write(`pg-boss: ${e.message}\n`));
  await boss.start();
  await boss.createQueue('bench');
  // Four workers of 16 a batch: the gateway's push concurrency is 64 too.
  for (let w = 0; w < 4; w++) {
    await boss.work('bench', { batchSize: 16, pollingIntervalSeconds: 0.5 }, async (jobs) => {
      await Promise.all(
        jobs.map(async (job) => {
          const res = await fetch(`${rx.url}/pgboss`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-job-id': job.id },
            body: JSON.stringify(job.data),
          });
          await res.arrayBuffer();
          if (res.status !== 200) throw new Error(`receiver ${res.status}`);
        })
      );
    });
  }
  const b0 = Date.now();
  await pool(MESSAGES, WIDTH, (n) => boss.send('bench', { n }));
  const bPublished = Date.now() - b0;
  await until('pg-boss deliveries', () => done.pgboss > 0, 300_000);
  const bRate = MESSAGES / ((done.pgboss - b0) / 1000);
  process.stdout.write(
    `queue: pg-boss sent ${MESSAGES} in ${bPublished} ms (library calls), all delivered after ${done.pgboss - b0} ms: ${fmt(bRate)}/s\n`
  );
  await boss.stop({ graceful: false, wait: true });
  await bossSchema.drop();
  return { gRate, bRate };
}

async function main() {
  process.stdout.write(
    `bench scheduling: node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${loadavg()
      .map((l) => fmt(l, 2))
      .join(' ')}; `
      + `${DELIVERIES} deliveries, ${CRON_JOBS} cron jobs × ${CRON_SECONDS} s, ${MESSAGES} queue messages; PostgreSQL ${PG_URL.replace(/\/\/[^@]*@/, '//')}\n`
  );
  const rate = await deliveries();
  const p99 = await cronLateness();
  const q = await queueVsPgBoss();
  line('webhook-deliveries', `${fmt(rate)}/s`, '2000/s', rate / 2000, '≥ 2000/s', rate >= 2000);
  line('cron-lateness-p99', `${fmt(p99)} ms`, '200 ms', p99 / 200, '≤ 200 ms', p99 <= 200);
  line(
    'queue-vs-pg-boss',
    `${fmt(q.gRate)} msg/s`,
    `${fmt(q.bRate)} msg/s (pg-boss)`,
    q.gRate / q.bRate,
    '≥ 1×',
    q.gRate >= q.bRate
  );
}

main().then(
  () => {
    cleanup();
    process.exit(0);
  },
  (e) => {
    process.stderr.write(`bench scheduling: ${e?.stack ?? e}\n`);
    cleanup();
    process.exit(1);
  }
);
