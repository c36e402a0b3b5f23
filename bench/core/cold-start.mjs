// The core bench's cold start: spawn to listening of the gateway (every built-in area on, the
// default config) beside a bare Fastify process started the same way in the same run, what
// a start loads, and which modules its CPU goes to.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { binNodeFlags, cpuSeconds, start, startBare, startGateway, stop, tempDir } from './processes.mjs';

/** Packages that must not load before their first use (a vendor SDK the default config does not configure). */
const HEAVY = [
  '@aws-sdk/',
  '@smithy/',
  'minio',
  'openai',
  'pg',
  'ioredis',
  'sharp',
  'exifr',
  '@imgly/',
  'onnxruntime-node',
  'playwright-core',
  'pdf-lib',
  'mustache',
  'pdfjs-dist',
  'tesseract.js',
  '@napi-rs/',
  'twilio',
  'stripe',
];

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * `rounds` pairs of starts, gateway then bare Fastify, each on a fresh process (the gateway on a
 * fresh data dir): wall time from spawn to the first 200, and the CPU the process had used by
 * then (user + system, 10 ms ticks), which a busy neighbour moves much less than the wall time.
 */
export async function coldStartPairs(root, rounds, log) {
  const gw = [];
  const bare = [];
  for (let i = 0; i < rounds; i++) {
    const g = await startGateway(root);
    const gCpu = cpuSeconds(g.child.pid) * 1000;
    await stop(g.child);
    const b = await startBare(root);
    const bCpu = cpuSeconds(b.child.pid) * 1000;
    await stop(b.child);
    gw.push({ wall: g.readyMs, cpu: gCpu });
    bare.push({ wall: b.readyMs, cpu: bCpu });
    log(
      `cold start ${i + 1}: gateway ${g.readyMs.toFixed(0)} ms (${gCpu.toFixed(0)} ms CPU), `
        + `bare fastify ${b.readyMs.toFixed(0)} ms (${bCpu.toFixed(0)} ms CPU) → ${(g.readyMs / b.readyMs).toFixed(2)}×\n`
    );
  }
  const pick = (xs, f) => median(xs.map(f));
  // The target is the pair whose ratio is the median: a pair shares the machine's moment.
  const byRatio = gw.map((g, i) => ({ g: g.wall, b: bare[i].wall })).sort((x, y) => x.g / x.b - y.g / y.b);
  const mid = byRatio[Math.floor(byRatio.length / 2)];
  return {
    gWall: pick(gw, (x) => x.wall),
    gCpu: pick(gw, (x) => x.cpu),
    bWall: pick(bare, (x) => x.wall),
    bCpu: pick(bare, (x) => x.cpu),
    mid: { gWall: mid.g, bWall: mid.b, ratio: mid.g / mid.b },
    cpuRatio: median(gw.map((g, i) => g.cpu / Math.max(10, bare[i].cpu))),
  };
}

/** The modules one start loads (through the load-trace hook), and which of them are heavy SDKs. */
export async function loadedAtStart(root) {
  const file = join(tempDir('svc-bench-trace-'), 'loaded.txt');
  process.env.BENCH_LOAD_TRACE = file;
  const hook = pathToFileURL(join(root, 'bench', 'core', 'load-trace.mjs')).href;
  try {
    const g = await startGateway(root, { nodeArgs: ['--import', hook] });
    await stop(g.child);
  } finally {
    delete process.env.BENCH_LOAD_TRACE;
  }
  const urls = [...new Set(readFileSync(file, 'utf8').split('\n').filter(Boolean))];
  const packages = new Set(urls.map(packageOf).filter((p) => !p.startsWith('dist/') && !p.startsWith('node:')));
  const heavy = [...packages].filter((p) => HEAVY.some((h) => (h.endsWith('/') ? p.startsWith(h) : p === h)));
  return { modules: urls.length, packages: packages.size, heavy };
}

/** `node_modules/@scope/name/…` → `@scope/name`; the gateway's own files by their path under dist. */
function packageOf(url) {
  if (!url.startsWith('file:')) return url.startsWith('node:') ? 'node:' : `${url.split(':')[0]}:`;
  const path = decodeURIComponent(new URL(url).pathname);
  const at = path.lastIndexOf(`${sep}node_modules${sep}`);
  if (at < 0) {
    const d = path.indexOf(`${sep}dist${sep}`);
    return d < 0 ? path : path.slice(d + 1);
  }
  const parts = path.slice(at + 14).split(sep);
  return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
}

/** Bare specifiers and relative paths a dist file imports statically, in source order. */
function staticImports(file) {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:^|\n)(?:import|export)\s(?:[^;'"]*?\sfrom\s)?['"]([^'"]+)['"]/g)].map((m) => m[1]);
}

/**
 * What a start imports, in the order it imports it: the packages the gateway's code imports
 * statically (depth first from the CLI and the modules `serve` loads), then each built-in area
 * and vendor, then the rest of the gateway (config, app).
 */
function importOrder(root) {
  const dist = join(root, 'dist');
  const own = [
    ...readdirSync(join(dist, 'plugins')).map((d) => join(dist, 'plugins', d, 'index.js')),
    ...readdirSync(join(dist, 'vendors')).map((d) => join(dist, 'vendors', d, 'index.js')),
    join(dist, 'config', 'load.js'),
    join(dist, 'core', 'app.js'),
  ].filter((f) => existsSync(f));
  const seen = new Set();
  const packages = [];
  const visit = (file) => {
    if (seen.has(file) || !existsSync(file)) return;
    seen.add(file);
    for (const spec of staticImports(file)) {
      if (spec.startsWith('.')) visit(join(dirname(file), spec));
      else if (!spec.startsWith('node:') && !packages.includes(spec)) packages.push(spec);
    }
  };
  // The CLI, then what `serve` imports dynamically (config, app), then the areas and vendors.
  const roots = [
    join(dist, 'bin', 'svc-gateway.js'),
    join(dist, 'bin', 'commands', 'serve.js'),
    ...own.slice(-2),
    ...own,
  ];
  for (const f of roots) visit(f);
  return [...packages, ...own];
}

/**
 * The slowest imports of a start: `runs` fresh processes (the CLI's node flags) each import the
 * list of `importOrder` one module at a time; the median wall and CPU time of each, top first.
 */
export async function slowestImports(root, runs, top = 10) {
  const order = importOrder(root);
  const bin = join(root, 'dist', 'bin', 'svc-gateway.js');
  const script = join(root, 'bench', 'core', 'import-times.mjs');
  const all = [];
  for (let i = 0; i < runs; i++) {
    const child = start(process.execPath, [...binNodeFlags(bin), script, ...order], {});
    let out = '';
    child.stdout.removeAllListeners('data');
    child.stdout.on('data', (d) => {
      out += d;
    });
    const code = await new Promise((resolve) => child.once('exit', resolve));
    if (code !== 0) throw new Error(`import-times exited with ${code}: ${child.stderrTail()}`);
    all.push(JSON.parse(out));
  }
  const name = (spec) => (spec.startsWith('/') ? spec.slice(root.length + 1) : spec);
  const rows = order.map((spec, j) => ({
    name: name(spec),
    wall: median(all.map((r) => r[j][1])),
    cpu: median(all.map((r) => r[j][2])),
  }));
  const total = { wall: rows.reduce((a, r) => a + r.wall, 0), cpu: rows.reduce((a, r) => a + r.cpu, 0) };
  return { total, count: rows.length, rows: rows.sort((a, b) => b.wall - a.wall).slice(0, top) };
}
