// The image bench: POST /v1/image/process resizing a 1600-px JPEG to 400 px through the gateway
// (a multipart upload; the JSON/base64 body is printed beside it) against raw sharp doing the
// same pipeline in this process, at the same concurrency, in alternating rounds after a warm-up
// of the gateway (BENCH_WARMUP s: the JIT's first half minute under load), with a bare node:http
// server doing the same HTTP work timed in the same rounds (floor.mjs, not a target); then the p99
// of a small resize while 40-MP resizes run against its p99 when idle, same run. The
// throughput calls go through a raw keep-alive client (bench/core/raw-client.mjs), the p99
// calls through undici. Run it with `npm run bench -- image`; see BENCHMARKS.md, `image`.
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { Pool } from 'undici';
import { activate, cleanup, cpuSeconds, startGateway, stop } from '../core/processes.mjs';
import { RawConnection, rawRequest } from '../core/raw-client.mjs';
import { startFloor } from './floor.mjs';
import { loops, noiseJpeg, post, postRaw, selfCpu, throughput } from './load.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 4);
const DURATION_S = Number(process.env.BENCH_DURATION ?? 4);
// Seconds of the gateway's throughput load before anything is timed: V8 compiles the request
// path's functions over its first ~30 s under load (BENCHMARKS.md, `image`), and a server's
// throughput is what it does after that, for hours.
const WARMUP_S = Number(process.env.BENCH_WARMUP ?? 30);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const PHASE_S = Number(process.env.BENCH_P99_PHASE ?? 8);
const BIG_CONNECTIONS = Number(process.env.BENCH_BIG_CONNECTIONS ?? 2);
const SMALL_CONNECTIONS = 2;
const PROF = process.env.BENCH_GATEWAY_PROF;
// The sharp vendor's queue (images at once); unset: its default, one a CPU core.
const SHARP_CONCURRENCY = process.env.BENCH_SHARP_CONCURRENCY;
// The output settings both sides use: the gateway's top-level width + format + quality.
const WIDTH = 400;
const QUALITY = 80;
// The decode options the sharp engine uses (vendors/sharp/engine.ts DECODE), so both sides decode alike.
const DECODE = { limitInputPixels: 40_000_000, failOn: 'error', pages: 1 };

const fmt = (n, d = 0) => n.toFixed(d);
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];

function line(name, figure, anchor, ratio, goal, ok) {
  process.stdout.write(
    `target ${name}: ${figure} vs ${anchor} → ${fmt(ratio, 2)}× (goal ${goal}) ${ok ? 'ok' : 'short'}\n`
  );
}

/** Raw sharp: what the gateway's engine does for a width + format + quality request. */
function rawResize(input) {
  return sharp(input, DECODE).autoOrient().resize({ width: WIDTH, fit: 'cover' }).jpeg({ quality: QUALITY }).toBuffer();
}

function processBody(input, width) {
  return {
    body: JSON.stringify({ input: { base64: input.toString('base64') }, width, format: 'jpeg', quality: QUALITY }),
    type: 'application/json',
  };
}

/** The same request as a multipart upload, serialized once as fetch's FormData sends it: the image as a file part. */
async function processForm(input, width) {
  const fd = new FormData();
  fd.append('width', String(width));
  fd.append('format', 'jpeg');
  fd.append('quality', String(QUALITY));
  fd.append('input', new Blob([input], { type: 'image/jpeg' }), 'input.jpg');
  const req = new Request('http://localhost/', { method: 'POST', body: fd });
  return { body: Buffer.from(await req.arrayBuffer()), type: req.headers.get('content-type') };
}

async function main() {
  process.stdout.write(
    `bench image: node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, `
      + `load ${loadavg()
        .map((l) => fmt(l, 2))
        .join(' ')}; `
      + `sharp ${sharp.versions.sharp} (libvips ${sharp.versions.vips}, `
      + `${sharp.concurrency()} threads); resize 1600→${WIDTH} JPEG q${QUALITY} (multipart upload, raw client), ${CONNECTIONS} at once, `
      + `${WARMUP_S} s warm-up, ${ROUNDS} rounds × ${DURATION_S} s a side; p99 of a 256→64 resize on ${SMALL_CONNECTIONS} connections, `
      + `${PHASE_S} s idle / ${PHASE_S} s beside ${BIG_CONNECTIONS} 40-MP resizes, 2 rounds\n`
  );
  const medium = await noiseJpeg(1600, 1200);
  const small = await noiseJpeg(256, 192);
  const big = await noiseJpeg(7296, 5472, 8);
  process.stdout.write(
    `inputs: 1600×1200 ${fmt(medium.length / 1024)} KiB, 256×192 ${fmt(small.length / 1024)} KiB, `
      + `7296×5472 (39.9 MP) ${fmt(big.length / 1048576, 1)} MiB\n`
  );

  const gw = await startGateway(root, {
    nodeArgs: PROF ? ['--cpu-prof', `--cpu-prof-dir=${PROF}`] : [],
    config: [
      'wallet: { trial_credit_usd: 100000 }',
      ...(SHARP_CONCURRENCY
        ? ['vendors:', `  - { id: sharp, use: sharp, config: { concurrency: ${Number(SHARP_CONCURRENCY)} } }`]
        : []),
    ],
  });
  const floor = await startFloor({ width: WIDTH, quality: QUALITY, decode: DECODE });
  const connections = CONNECTIONS + BIG_CONNECTIONS + SMALL_CONNECTIONS;
  const pool = new Pool(gw.base, { connections, keepAliveTimeout: 60_000 });
  let conns = [];
  let floorConns = [];
  try {
    const key = await activate(gw.base);
    const mediumJson = processBody(medium, WIDTH);
    const mediumBody = await processForm(medium, WIDTH);
    const smallBody = await processForm(small, 64);
    const bigBody = await processForm(big, WIDTH);
    // Every request must really give the image asked for before it is timed.
    for (const [body, w] of [
      [mediumJson, WIDTH],
      [mediumBody, WIDTH],
      [smallBody, 64],
      [bigBody, WIDTH],
    ]) {
      const out = await post(pool, key, body);
      if (out.width !== w || out.mime !== 'image/jpeg') throw new Error(`unexpected result ${JSON.stringify(out)}`);
    }
    const rawOut = await sharp(await rawResize(medium)).metadata();
    if (rawOut.width !== WIDTH || rawOut.format !== 'jpeg') throw new Error(`raw sharp made ${JSON.stringify(rawOut)}`);

    // The throughput sides go through the raw client, one connection a loop; the p99 phases
    // (latency, not CPU) through undici.
    conns = Array.from({ length: CONNECTIONS }, () => new RawConnection(gw.base));
    const rawOf = ({ body, type }) =>
      rawRequest(gw.base, {
        path: '/v1/image/process',
        headers: { 'content-type': type, authorization: `Bearer ${key}` },
        body: Buffer.from(body),
      });
    const mediumRaw = rawOf(mediumBody);
    const jsonRaw = rawOf(mediumJson);
    for (const req of [mediumRaw, jsonRaw]) {
      const out = await postRaw(conns[0], req);
      if (out.width !== WIDTH) throw new Error(`unexpected result ${JSON.stringify(out)}`);
    }
    const gwOnce = (i) => postRaw(conns[i], mediumRaw);
    floorConns = Array.from({ length: CONNECTIONS }, () => new RawConnection(floor.base));
    const floorRaw = rawRequest(floor.base, {
      path: '/v1/image/process',
      headers: { 'content-type': mediumBody.type },
      body: Buffer.from(mediumBody.body),
    });
    const floorOnce = async (i) => {
      const res = await floorConns[i].send(floorRaw);
      if (res.status !== 200) throw new Error(`the floor server answered ${res.status}: ${res.body}`);
    };
    const floorOut = JSON.parse((await floorConns[0].send(floorRaw)).body.toString('utf8'));
    if (floorOut.width !== WIDTH) throw new Error(`the floor server made ${JSON.stringify(floorOut)}`);
    const jsonOnce = (i) => postRaw(conns[i], jsonRaw);
    const rawOnce = () => rawResize(medium);
    const gwCpu = () => cpuSeconds(gw.child.pid);
    const s = (x) => `${fmt(x.rate, 1)} images/s (${fmt(x.cpuMs, 1)} ms CPU/image)`;
    // The warm-up, in slices of up to 10 s, printed: the CPU an image falls as the JIT finishes.
    const slices = [];
    for (let at = 0; at < WARMUP_S; at += 10) {
      const w = await throughput(CONNECTIONS, Math.min(10, WARMUP_S - at), gwOnce, gwCpu);
      slices.push(`${at}–${Math.min(at + 10, WARMUP_S)} s ${s(w)}`);
    }
    const floorCpu = () => cpuSeconds(floor.child.pid);
    await throughput(CONNECTIONS, 3, floorOnce, floorCpu);
    await throughput(CONNECTIONS, 2, rawOnce, selfCpu);
    process.stdout.write(`warm-up (not timed): gateway (multipart) ${slices.join(', ') || 'none'}\n`);
    const g = [];
    const r = [];
    const f = [];
    // Alternate in short rounds, the order changed each round (every order of the three sides
    // once in six rounds), so a neighbour's burst or a drift of the VM's speed lands on all
    // sides rather than one. The transport floor (floor.mjs) is timed with them, not a target.
    const ORDERS = [
      [0, 1, 2],
      [2, 1, 0],
      [1, 2, 0],
      [0, 2, 1],
      [2, 0, 1],
      [1, 0, 2],
    ];
    for (let i = 0; i < ROUNDS; i++) {
      const sides = [
        async () => g.push(await throughput(CONNECTIONS, DURATION_S, gwOnce, gwCpu)),
        async () => r.push(await throughput(CONNECTIONS, DURATION_S, rawOnce, selfCpu)),
        async () => f.push(await throughput(CONNECTIONS, DURATION_S, floorOnce, floorCpu)),
      ];
      for (const side of ORDERS[i % ORDERS.length]) await sides[side]();
      process.stdout.write(
        `round ${i + 1}: gateway (multipart) ${s(g[i])}, raw sharp ${s(r[i])} → ${fmt(g[i].rate / r[i].rate, 2)}×; `
          + `floor ${s(f[i])}\n`
      );
    }
    const mean = (xs, f) => xs.reduce((acc, x) => acc + f(x), 0) / xs.length;
    const gRate = mean(g, (x) => x.rate);
    const rRate = mean(r, (x) => x.rate);
    const fRate = mean(f, (x) => x.rate);
    process.stdout.write(
      `transport floor (not a target): node:http + sharp, the same uploads (bench/image/floor.mjs): ${fmt(fRate, 1)} `
        + `images/s (${fmt(
          mean(f, (x) => x.cpuMs),
          1
        )} ms CPU/image) → ${fmt(fRate / rRate, 2)}× raw sharp; the gateway ${fmt(gRate / fRate, 2)}× the floor\n`
    );
    // The spec's JSON body, after the target's rounds (its 1.6 MB strings make garbage of their
    // own), beside raw sharp again.
    const j = [];
    const rj = [];
    await throughput(CONNECTIONS, 2, jsonOnce, gwCpu);
    for (let i = 0; i < 2; i++) {
      j.push(await throughput(CONNECTIONS, DURATION_S, jsonOnce, gwCpu));
      rj.push(await throughput(CONNECTIONS, DURATION_S, rawOnce, selfCpu));
    }
    const jRate = mean(j, (x) => x.rate);
    process.stdout.write(
      `JSON base64 body (not a target): ${fmt(jRate, 1)} images/s (${fmt(
        mean(j, (x) => x.cpuMs),
        1
      )} ms CPU/image) → ${fmt(jRate / mean(rj, (x) => x.rate), 2)}× raw sharp\n`
    );

    // Small resizes alone, then beside 40-MP resizes, twice, so a slow spell lands on both.
    const idle = [];
    const loaded = [];
    let bigDone = 0;
    const smallOnce = () => post(pool, key, smallBody);
    for (let i = 0; i < 2; i++) {
      idle.push(...(await loops(SMALL_CONNECTIONS, PHASE_S, smallOnce)));
      let running = true;
      const bigLoops = Promise.all(
        Array.from({ length: BIG_CONNECTIONS }, async () => {
          while (running) {
            await post(pool, key, bigBody);
            bigDone++;
          }
        })
      );
      // Let the big resizes start before the small ones are timed.
      await new Promise((res) => setTimeout(res, 500));
      loaded.push(...(await loops(SMALL_CONNECTIONS, PHASE_S, smallOnce)));
      running = false;
      await bigLoops;
    }
    idle.sort((a, b) => a - b);
    loaded.sort((a, b) => a - b);
    for (const [name, t] of [
      ['idle', idle],
      ['beside 40-MP resizes', loaded],
    ]) {
      process.stdout.write(
        `small resize ${name}: ${t.length} calls, p50 ${fmt(pct(t, 0.5), 1)} ms, `
          + `p99 ${fmt(pct(t, 0.99), 1)} ms, max ${fmt(t[t.length - 1], 1)} ms\n`
      );
    }
    process.stdout.write(
      `40-MP resizes completed: ${bigDone}; bench image: load at the end `
        + `${loadavg()
          .map((l) => fmt(l, 2))
          .join(' ')}\n`
    );

    line(
      'resize-throughput',
      `${fmt(gRate, 1)} images/s (${fmt(
        mean(g, (x) => x.cpuMs),
        1
      )} ms CPU/image)`,
      `${fmt(rRate, 1)} images/s (${fmt(
        mean(r, (x) => x.cpuMs),
        1
      )} ms CPU/image, raw sharp)`,
      gRate / rRate,
      '≥ 0.85×',
      gRate >= 0.85 * rRate
    );
    const p99Idle = pct(idle, 0.99);
    const p99Loaded = pct(loaded, 0.99);
    line(
      'small-p99-under-load',
      `${fmt(p99Loaded, 1)} ms p99 beside 40-MP resizes`,
      `${fmt(p99Idle, 1)} ms idle`,
      p99Loaded / p99Idle,
      '≤ 3×',
      p99Loaded <= 3 * p99Idle
    );
  } finally {
    for (const c of [...conns, ...floorConns]) c.close();
    await pool.close();
    await stop(gw.child);
    await stop(floor.child);
  }
}

main().then(
  () => {
    cleanup();
    process.exit(0);
  },
  (e) => {
    process.stderr.write(`bench image: ${e?.stack ?? e}\n`);
    cleanup();
    process.exit(1);
  }
);
