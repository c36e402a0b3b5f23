// The analytics bench: `ingest`, batches of 100 events through POST /v1/analytics/track against
// the same batches in PostHog's capture wire to a plain server that appends them to a file,
// alternating; `funnel`, a 4-step funnel over 1,000,000 generated events of 100,000 people
// through POST /v1/analytics/funnel against DuckDB running the same funnel on the same events in
// this process, alternating; then the same funnel on PostgreSQL as an extra line.
// `npm run bench -- analytics`; see BENCHMARKS.md, `analytics`.
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import {
  activate,
  cleanup,
  cpuSeconds,
  freePort,
  start,
  startGateway,
  stop,
  tempDir,
  waitFor200,
} from '../core/processes.mjs';
import { fmt, line, load } from '../lib/measure.mjs';
import { duckdbFunnel, FUNNEL, loadPostgres, loadSqlite } from './funnel-data.mjs';
import { START_MS } from './generate.mjs';
import { ingestSide } from './ingest.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION_MS = Number(process.env.BENCH_DURATION ?? 4) * 1000;
const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const PEOPLE = Number(process.env.BENCH_PEOPLE ?? 100_000);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 5);
const PG_URL = process.env.SVC_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const DAY = 86_400_000;
const RANGE = { from: START_MS, to: START_MS + 40 * DAY, windowMs: 14 * DAY };
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const say = (s) => process.stdout.write(`${s}\n`);

async function ingest() {
  const gw = await startGateway(root);
  const key = await activate(gw.base);
  const floorPort = await freePort();
  const floor = start(process.execPath, [join(here, 'floor-server.mjs')], {
    PORT: String(floorPort),
    FLOOR_FILE: join(tempDir('svc-bench-floor-'), 'batches.jsonl'),
  });
  await waitFor200(`http://127.0.0.1:${floorPort}/`, floor, performance.now());
  const sides = {
    gateway: ingestSide({
      url: `${gw.base}/v1/analytics/track`,
      headers: { authorization: `Bearer ${key}` },
      pid: gw.child.pid,
    }),
    floor: ingestSide({
      url: `http://127.0.0.1:${floorPort}/batch/`,
      posthog: true,
      key: 'phc_bench',
      pid: floor.pid,
    }),
  };
  const sum = { gateway: { events: 0, wall: 0, cpu: 0 }, floor: { events: 0, wall: 0, cpu: 0 } };
  try {
    for (const s of Object.values(sides)) await s.run(CONNECTIONS, 1000); // warm-up, not counted
    for (let r = 0; r < ROUNDS; r++)
      for (const who of r % 2 === 0 ? ['gateway', 'floor'] : ['floor', 'gateway']) {
        const m = await sides[who].run(CONNECTIONS, DURATION_MS);
        sum[who].events += m.events;
        sum[who].wall += m.wall;
        sum[who].cpu += m.cpuUs * m.events;
        say(
          `ingest round ${r + 1} ${who}: ${m.events} events in ${fmt(m.wall, 1)} s (${fmt(m.rate)} events/s, `
            + `${fmt(m.cpuUs, 1)} µs CPU an event), load ${load()}`
        );
      }
  } finally {
    for (const s of Object.values(sides)) s.close();
    await stop(floor);
    await stop(gw.child);
  }
  const rate = (s) => s.events / s.wall;
  const cpu = (s) => fmt(s.cpu / s.events, 1);
  return () =>
    line(
      'ingest',
      `${fmt(rate(sum.gateway))} events/s through POST /v1/analytics/track (${cpu(sum.gateway)} µs CPU an event)`,
      `${fmt(rate(sum.floor))} events/s to a plain server appending PostHog /batch bodies to a file `
        + `(${cpu(sum.floor)} µs CPU an event)`,
      rate(sum.gateway) / rate(sum.floor),
      '≥ 0.5×',
      rate(sum.gateway) >= 0.5 * rate(sum.floor)
    );
}

/** A gateway with the generated events of one account loaded by `loadInto`, and a funnel call of it. */
async function loadedGateway(config, loadInto) {
  const gw = await startGateway(root, { config });
  const key = await activate(gw.base);
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${key}` };
  // One event that is no step makes the account's id readable from the table.
  const probe = await fetch(`${gw.base}/v1/analytics/track`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ event: 'bench-probe', distinct_id: 'probe' }),
  });
  if (probe.status !== 200) throw new Error(`track answered ${probe.status}: ${await probe.text()}`);
  const t0 = performance.now();
  const rows = await loadInto();
  say(`  loaded ${rows} events straight into the database in ${fmt((performance.now() - t0) / 1000, 1)} s`);
  const body = JSON.stringify({
    steps: FUNNEL,
    from: new Date(RANGE.from).toISOString(),
    to: new Date(RANGE.to).toISOString(),
    window_seconds: RANGE.windowMs / 1000,
  });
  const query = async () => {
    const c0 = cpuSeconds(gw.child.pid);
    const t = performance.now();
    const res = await fetch(`${gw.base}/v1/analytics/funnel`, { method: 'POST', headers, body });
    if (res.status !== 200) throw new Error(`funnel answered ${res.status}: ${await res.text()}`);
    const counts = (await res.json()).steps.map((s) => s.count);
    return { ms: performance.now() - t, cpuMs: (cpuSeconds(gw.child.pid) - c0) * 1000, counts };
  };
  return { gw, query };
}

/** Gateway and DuckDB in turn, QUERIES times each after one warm-up each; checks they count the same. */
async function alternate(label, query, duck) {
  const times = { gateway: [], duckdb: [], cpu: [] };
  const want = await duck.funnel(FUNNEL, RANGE.from, RANGE.to, RANGE.windowMs);
  const first = await query();
  if (first.counts.join() !== want.join())
    throw new Error(`${label} counted ${first.counts} where DuckDB counted ${want}`);
  for (let i = 0; i < QUERIES; i++) {
    for (const who of i % 2 === 0 ? ['gateway', 'duckdb'] : ['duckdb', 'gateway']) {
      if (who === 'gateway') {
        const r = await query();
        times.gateway.push(r.ms);
        times.cpu.push(r.cpuMs);
      } else {
        const t = performance.now();
        await duck.funnel(FUNNEL, RANGE.from, RANGE.to, RANGE.windowMs);
        times.duckdb.push(performance.now() - t);
      }
    }
  }
  const g = median(times.gateway);
  const d = median(times.duckdb);
  say(
    `  ${label}: ${times.gateway.map((x) => fmt(x)).join(', ')} ms (gateway CPU ${fmt(median(times.cpu))} ms), `
      + `DuckDB ${times.duckdb.map((x) => fmt(x)).join(', ')} ms; steps ${want.join(' → ')}; load ${load()}`
  );
  return { g, d, cpu: median(times.cpu) };
}

async function funnel(duck) {
  const dir = tempDir('svc-bench-analytics-');
  const file = join(dir, 'gateway.db');
  const { gw, query } = await loadedGateway(['database:', `  url: ${JSON.stringify(`sqlite:${file}`)}`], () =>
    loadSqlite(file, EVENTS, PEOPLE)
  );
  try {
    const r = await alternate('sqlite', query, duck);
    return () =>
      line(
        'funnel',
        `${fmt(r.g)} ms for a 4-step funnel over ${EVENTS} events of ${PEOPLE} people through POST `
          + `/v1/analytics/funnel (SQLite, ${fmt(r.cpu)} ms gateway CPU)`,
        `${fmt(r.d)} ms (DuckDB in memory, same funnel, same events)`,
        r.g / r.d,
        '≤ 3×',
        r.g <= 3 * r.d
      );
  } finally {
    await stop(gw.child);
  }
}

/** The same on PostgreSQL, in a schema of its own dropped afterwards; a line, not a target. */
async function postgres(duck) {
  const client = new pg.Client({ connectionString: PG_URL });
  try {
    await client.connect();
  } catch (e) {
    say(`postgres: skipped (${PG_URL}: ${e.message})`);
    return;
  }
  const schema = `bench_analytics_${process.pid}`;
  const url = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schema}`;
  let gw;
  try {
    const loaded = await loadedGateway(['database:', `  url: ${JSON.stringify(url)}`], () =>
      loadPostgres(client, schema, EVENTS, PEOPLE)
    );
    gw = loaded.gw;
    const r = await alternate('postgres', loaded.query, duck);
    say(
      `postgres: ${fmt(r.g)} ms for the same funnel through the gateway on PostgreSQL (${fmt(r.cpu)} ms gateway CPU) `
        + `vs ${fmt(r.d)} ms (DuckDB) → ${fmt(r.g / r.d, 2)}× (not a target; the goal is ≤ 3× on SQLite)`
    );
  } finally {
    if (gw) await stop(gw.child);
    await client.query(`drop schema if exists ${schema} cascade`);
    await client.end();
  }
}

async function main() {
  say(
    `bench analytics: node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${load()}; `
      + `ingest ${ROUNDS} rounds × ${DURATION_MS / 1000} s a side after 1 s warm-up, ${CONNECTIONS} connections, `
      + `batches of 100; funnel over ${EVENTS} events of ${PEOPLE} people, ${QUERIES} queries a side, alternating`
  );
  const lines = [await ingest()];
  const t0 = performance.now();
  const duck = await duckdbFunnel(EVENTS, PEOPLE);
  say(`funnel: DuckDB loaded ${EVENTS} events (appender) in ${fmt((performance.now() - t0) / 1000, 1)} s`);
  try {
    lines.push(await funnel(duck));
    if (process.env.BENCH_POSTGRES !== '0') await postgres(duck);
  } finally {
    duck.close();
  }
  for (const print of lines) print();
}

main().then(
  () => {
    cleanup();
    process.exit(0);
  },
  (e) => {
    process.stderr.write(`bench analytics: ${e?.stack ?? e}\n`);
    cleanup();
    process.exit(1);
  }
);
