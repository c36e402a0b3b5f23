// The flags bench: flag evaluations a second through the gateway's API (key auth, rate limit,
// query validation, the account's flags from memory, a rule and a percentage rollout, the
// response schema) against a bare Fastify route answering a constant, same run, alternating.
// Run it with `npm run bench -- flags`; see BENCHMARKS.md, `flags`.
import autocannon from 'autocannon';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { activate, cleanup, cpuSeconds, freePort, start, startGateway, stop, waitFor200 } from '../core/processes.mjs';
import { calibrationLine } from '../lib/calibration.mjs';
import { fmt, line, load } from '../lib/measure.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const DURATION_S = Number(process.env.BENCH_DURATION ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
// Longer than core's 2 s: on a loaded machine 2 s at a fraction of a core left the gateway's
// first round on code V8 had not optimised yet (3,700 evaluations/s, then 13,000-15,000).
const WARMUP_S = Number(process.env.BENCH_WARMUP ?? 5);
const GOAL = 0.6;
const FLAG = 'checkout';
const IDS = 10_000;
const PROF = process.env.BENCH_PROF_DIR;

// A rule on two attributes, then a 30 % rollout for everyone else: each call hashes its
// distinct_id unless the rule serves it.
const definition = {
  key: FLAG,
  type: 'boolean',
  rules: [
    {
      description: 'pro users in DE and FR',
      conditions: [
        { attribute: 'country', op: 'in', values: ['DE', 'FR'] },
        { attribute: 'plan', op: 'eq', value: 'pro' },
      ],
      serve: { variant: 'on' },
    },
  ],
  fallthrough: {
    rollout: [
      { variant: 'on', weight: 30 },
      { variant: 'off', weight: 70 },
    ],
  },
};

const COUNTRIES = ['DE', 'US', 'FR', 'BR', 'JP'];
const paths = Array.from(
  { length: IDS },
  (_, i) =>
    `/v1/observability/flags/${FLAG}?distinct_id=user-${i}&country=${COUNTRIES[i % 5]}&plan=${i % 3 ? 'free' : 'pro'}`
);

/** One autocannon run over the varied paths: evaluations a second and the server's CPU per evaluation. */
async function run(target, duration) {
  let n = 0;
  const cpu0 = cpuSeconds(target.pid);
  const r = await autocannon({
    url: target.base,
    headers: target.headers,
    connections: CONNECTIONS,
    duration,
    pipelining: 1,
    requests: [
      {
        setupRequest: (req) => {
          req.path = paths[n++ % IDS];
          return req;
        },
      },
    ],
  });
  const cpu = cpuSeconds(target.pid) - cpu0;
  if (r.non2xx || r.errors || r.timeouts)
    throw new Error(`${target.base}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts in ${duration} s`);
  return {
    rate: r.requests.total / duration,
    cpuUs: (cpu * 1e6) / Math.max(1, r.requests.total),
    busy: cpu / duration,
  };
}

async function startBareFlags() {
  const port = await freePort();
  const child = start(process.execPath, [join(root, 'bench', 'flags', 'bare-server.mjs')], { PORT: String(port) });
  const base = `http://127.0.0.1:${port}`;
  await waitFor200(`${base}/v1/observability/flags/${FLAG}`, child, performance.now());
  return { child, base };
}

/** The flag made through the API, and the answers checked: the rule, the rollout, both variants. */
async function setUp(base, key) {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const res = await fetch(`${base}/v1/observability/flags`, {
    method: 'POST',
    headers,
    body: JSON.stringify(definition),
  });
  if (res.status !== 200) throw new Error(`creating the flag answered ${res.status}: ${await res.text()}`);
  const reasons = new Set();
  const values = new Set();
  for (const p of paths.slice(0, 60)) {
    const r = await fetch(`${base}${p}`, { headers });
    const body = await r.json();
    if (r.status !== 200) throw new Error(`${p} answered ${r.status}: ${JSON.stringify(body)}`);
    reasons.add(body.reason);
    values.add(body.value);
  }
  if (!reasons.has('TARGETING_MATCH') || !reasons.has('SPLIT') || values.size !== 2)
    throw new Error(`the sample did not reach the rule and both sides of the rollout: ${[...reasons]}`);
}

async function main() {
  process.stdout.write(`${await calibrationLine()}\n`);
  process.stdout.write(
    `bench flags: node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${load()}; `
      + `autocannon ${CONNECTIONS} connections, ${IDS} distinct_ids, ${ROUNDS} rounds × ${DURATION_S} s each side `
      + `after ${WARMUP_S} s warm-up\n`
  );
  const gw = await startGateway(root, PROF ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${PROF}`] } : {});
  const bare = await startBareFlags();
  try {
    const key = await activate(gw.base);
    await setUp(gw.base, key);
    const gwT = { pid: gw.child.pid, base: gw.base, headers: { authorization: `Bearer ${key}` } };
    const bareT = { pid: bare.child.pid, base: bare.base, headers: { authorization: `Bearer ${key}` } };
    await run(gwT, WARMUP_S);
    await run(bareT, WARMUP_S);
    const g = [];
    const b = [];
    // Alternate, so a neighbour's burst of CPU lands on both sides rather than one.
    for (let i = 0; i < ROUNDS; i++) {
      g.push(await run(gwT, DURATION_S));
      b.push(await run(bareT, DURATION_S));
      const show = (x) => `${fmt(x.rate)} evals/s (${fmt(x.cpuUs, 1)} µs CPU/eval, ${fmt(x.busy * 100)} % of a core)`;
      process.stdout.write(`round ${i + 1}: gateway ${show(g[i])}, bare fastify ${show(b[i])}\n`);
    }
    const mean = (xs, f) => xs.reduce((s, x) => s + f(x), 0) / xs.length;
    const gRate = mean(g, (x) => x.rate);
    const bRate = mean(b, (x) => x.rate);
    const gCpu = mean(g, (x) => x.cpuUs);
    const bCpu = mean(b, (x) => x.cpuUs);
    process.stdout.write(
      `server CPU per evaluation: gateway ${fmt(gCpu, 1)} µs, bare fastify ${fmt(bCpu, 1)} µs (${fmt(bCpu / gCpu, 2)}×)\n`
    );
    const ratio = gRate / bRate;
    line(
      'flag-evaluations',
      `${fmt(gRate)} evals/s`,
      `${fmt(bRate)} req/s (bare fastify)`,
      ratio,
      `≥ ${GOAL}×`,
      ratio >= GOAL
    );
  } finally {
    await stop(gw.child);
    await stop(bare.child);
  }
}

main().then(
  () => {
    cleanup();
    process.exit(0);
  },
  (e) => {
    process.stderr.write(`bench flags: ${e?.stack ?? e}\n`);
    cleanup();
    process.exit(1);
  }
);
