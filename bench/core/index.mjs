// The core bench: what the gateway's own machinery (auth, rate limit, hooks, one database
// read) costs per request against bare Fastify, how fast it starts, and how much memory it
// holds idle, and its cold start beside bare Fastify's. Run it with `npm run bench -- core`;
// see BENCHMARKS.md, `core`.
import autocannon from 'autocannon';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { coldStartPairs, loadedAtStart, slowestImports } from './cold-start.mjs';
import { activate, cleanup, cpuSeconds, rssBytes, startBare, startGateway, stop } from './processes.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const DURATION_S = Number(process.env.BENCH_DURATION ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const WARMUP_S = 2;
const COLD_STARTS = 3;
const COLD_PAIRS = Number(process.env.BENCH_COLD_ROUNDS ?? 5);
const IMPORT_RUNS = 3;
// Spawn to listening of the gateway with every built-in area on, over bare Fastify's in the same
// run. Measured 1.7–5.2× (3.5–4.3× in CPU) with the machine loaded by other work, and quiet starts
// took 0.56–0.75 s (BENCHMARKS.md, `core`, "The ratio's goal"), so bare Fastify's start there is
// about a quarter of that (the CPU ratio), and 6× stays near the 1 s with room for more areas.
const COLD_RATIO_GOAL = 6;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (n, d = 0) => n.toFixed(d);

/**
 * One autocannon run against a server process: requests a second, and the server's CPU time
 * per request (less sensitive to neighbours than the rate). A non-2xx answer or a socket
 * error makes the figures meaningless.
 */
async function load(target, duration) {
  const cpu0 = cpuSeconds(target.pid);
  const r = await autocannon({
    url: target.url,
    headers: target.headers,
    connections: CONNECTIONS,
    duration,
    pipelining: 1,
  });
  const cpu = cpuSeconds(target.pid) - cpu0;
  if (r.non2xx || r.errors || r.timeouts)
    throw new Error(`${target.url}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts in ${duration} s`);
  return {
    rate: r.requests.total / duration,
    cpuUs: (cpu * 1e6) / Math.max(1, r.requests.total),
    busy: cpu / duration,
  };
}

function line(name, figure, anchor, ratio, goal, ok) {
  process.stdout.write(
    `target ${name}: ${figure} vs ${anchor} → ${fmt(ratio, 2)}× (goal ${goal}) ${ok ? 'ok' : 'short'}\n`
  );
}

async function throughput() {
  const gw = await startGateway(root);
  const bare = await startBare(root);
  try {
    const key = await activate(gw.base);
    const gwTarget = {
      pid: gw.child.pid,
      url: `${gw.base}/v1/account/balance`,
      headers: { authorization: `Bearer ${key}` },
    };
    const bareTarget = {
      pid: bare.child.pid,
      url: `${bare.base}/v1/account/balance`,
      headers: { authorization: `Bearer ${key}` },
    };
    const check = await fetch(gwTarget.url, { headers: gwTarget.headers });
    const body = await check.text();
    if (check.status !== 200) throw new Error(`gateway balance answered ${check.status}: ${body}`);
    await load(gwTarget, WARMUP_S);
    await load(bareTarget, WARMUP_S);
    const g = [];
    const b = [];
    // Alternate, so a neighbour's burst of CPU lands on both sides rather than one.
    for (let i = 0; i < ROUNDS; i++) {
      g.push(await load(gwTarget, DURATION_S));
      b.push(await load(bareTarget, DURATION_S));
      const show = (x) => `${fmt(x.rate)} req/s (${fmt(x.cpuUs, 1)} µs CPU/req, ${fmt(x.busy * 100)} % of a core)`;
      process.stdout.write(`round ${i + 1}: gateway ${show(g[i])}, bare fastify ${show(b[i])}\n`);
    }
    const mean = (xs, f) => xs.reduce((s, x) => s + f(x), 0) / xs.length;
    return {
      gAvg: mean(g, (x) => x.rate),
      bAvg: mean(b, (x) => x.rate),
      gCpu: mean(g, (x) => x.cpuUs),
      bCpu: mean(b, (x) => x.cpuUs),
    };
  } finally {
    await stop(gw.child);
    await stop(bare.child);
  }
}

/** Spawn to first 200 from /readyz on a fresh data dir, then RSS after a short warm-up. */
async function coldStartAndRss() {
  const ready = [];
  const rss = [];
  for (let i = 0; i < COLD_STARTS; i++) {
    const gw = await startGateway(root);
    try {
      ready.push(gw.readyMs);
      const key = await activate(gw.base);
      for (let j = 0; j < 200; j++) {
        const res = await fetch(`${gw.base}/v1/account/balance`, { headers: { authorization: `Bearer ${key}` } });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`warm-up request answered ${res.status}`);
      }
      await new Promise((r) => setTimeout(r, 1000));
      rss.push(rssBytes(gw.child.pid));
      process.stdout.write(`start ${i + 1}: ready in ${fmt(gw.readyMs)} ms, idle RSS ${fmt(rss[i] / 2 ** 20, 1)} MB\n`);
    } finally {
      await stop(gw.child);
    }
  }
  return { readyMs: median(ready), rss: median(rss) };
}

/** The cold start as a ratio to bare Fastify's, what a start loads, and its slowest imports. */
async function coldStartRatio() {
  const pairs = await coldStartPairs(root, COLD_PAIRS, (s) => process.stdout.write(s));
  process.stdout.write(
    `cold start (median of ${COLD_PAIRS}): gateway ${fmt(pairs.gWall)} ms `
      + `(${fmt(pairs.gCpu)} ms CPU), bare fastify ${fmt(pairs.bWall)} ms (${fmt(pairs.bCpu)} ms CPU); `
      + `CPU ${fmt(pairs.cpuRatio, 2)}×\n`
  );
  const loaded = await loadedAtStart(root);
  process.stdout.write(
    `loaded at start: ${loaded.modules} modules from ${loaded.packages} packages; `
      + `vendor SDKs among them: ${loaded.heavy.length ? loaded.heavy.join(', ') : 'none'}\n`
  );
  const imports = await slowestImports(root, IMPORT_RUNS);
  process.stdout.write(
    `slowest imports (${imports.count} imported one by one in a fresh process, `
      + `${fmt(imports.total.wall)} ms, ${fmt(imports.total.cpu)} ms CPU in all; median of ${IMPORT_RUNS}; `
      + 'each what it added to the ones before):\n'
  );
  for (const r of imports.rows) {
    process.stdout.write(`  ${r.name.padEnd(36)} ${fmt(r.wall).padStart(5)} ms (${fmt(r.cpu)} ms CPU)\n`);
  }
  return pairs;
}

async function main() {
  process.stdout.write(
    `bench core: node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${loadavg()
      .map((l) => fmt(l, 2))
      .join(' ')}; `
      + `autocannon ${CONNECTIONS} connections, ${ROUNDS} rounds × ${DURATION_S} s each side after ${WARMUP_S} s warm-up\n`
  );
  const cold = await coldStartAndRss();
  const pairs = await coldStartRatio();
  const tp = await throughput();
  const ratio = tp.gAvg / tp.bAvg;
  process.stdout.write(
    `server CPU per request: gateway ${fmt(tp.gCpu, 1)} µs, bare fastify ${fmt(tp.bCpu, 1)} µs (${fmt(tp.bCpu / tp.gCpu, 2)}×)\n`
  );
  line('throughput', `${fmt(tp.gAvg)} req/s`, `${fmt(tp.bAvg)} req/s (bare fastify)`, ratio, '≥ 0.5×', ratio >= 0.5);
  line('cold-start', `${fmt(cold.readyMs)} ms`, '1000 ms', cold.readyMs / 1000, '≤ 1 s', cold.readyMs <= 1000);
  const mid = pairs.mid;
  line(
    'cold-start-ratio',
    `${fmt(mid.gWall)} ms`,
    `${fmt(mid.bWall)} ms (bare fastify)`,
    mid.ratio,
    `≤ ${COLD_RATIO_GOAL}×`,
    mid.ratio <= COLD_RATIO_GOAL
  );
  const mb = cold.rss / 2 ** 20;
  line('idle-rss', `${fmt(mb, 1)} MB`, '120 MB', mb / 120, '≤ 120 MB', mb <= 120);
}

main().then(
  () => {
    cleanup();
    process.exit(0);
  },
  (e) => {
    process.stderr.write(`bench core: ${e?.stack ?? e}\n`);
    cleanup();
    process.exit(1);
  }
);
