// The image bench: POST /v1/image/process resizing a 1600-px JPEG to 400 px through the gateway
// (a multipart upload; the JSON/base64 body is printed beside it) against raw sharp doing the
// same pipeline in this process, at the same concurrency, in alternating rounds after a warm-up
// of the gateway (BENCH_WARMUP s: the JIT's first half minute under load); then the p99
// of a small resize while 40-MP resizes run against its p99 when idle, same run. The
// throughput calls go through a raw keep-alive client (bench/core/raw-client.mjs), the p99
// calls through undici. Run it with `npm run bench -- image`; see BENCHMARKS.md.
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { Pool } from 'undici';
import { activate, cleanup, cpuSeconds, startGateway, stop } from '../core/processes.mjs';
import { RawConnection, rawRequest } from '../core/raw-client.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 4);
const DURATION_S = Number(process.env.BENCH_DURATION ?? 4);
// Seconds of the gateway's throughput load before anything is timed: V8 compiles the request
// path's functions over its first ~30 s under load (BENCHMARKS.md, image), and a server's
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

/**
 * A JPEG of Gaussian noise, so decoding and encoding do real work (a flat image compresses to
 * nothing). `grain` > 1 makes the noise at 1/grain the size and scales it up: the 40-MP input
 * stays a few MB (its base64 must fit the 25 MiB body cap) while every pixel is still decoded.
 */
async function noiseJpeg(width, height, grain = 1) {
  const w = Math.ceil(width / grain);
  const h = Math.ceil(height / grain);
  let img = sharp({ create: { width: w, height: h, channels: 3, noise: { type: 'gaussian', mean: 128, sigma: 40 } } });
  if (grain > 1) img = sharp(await img.png().toBuffer()).resize(width, height, { fit: 'fill' });
  return img.jpeg({ quality: 90 }).toBuffer();
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

/** POST one process call; throws on anything but a 200 with an image_url. */
async function post(pool, key, { body, type }) {
  const res = await pool.request({
    method: 'POST',
    path: '/v1/image/process',
    body,
    headers: { 'content-type': type, authorization: `Bearer ${key}` },
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`/v1/image/process answered ${res.statusCode}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/** The same call on a connection of the raw client (throughput: see bench/core/raw-client.mjs). */
async function postRaw(conn, request) {
  const res = await conn.send(request);
  const text = res.body.toString('utf8');
  if (res.status !== 200) throw new Error(`/v1/image/process answered ${res.status}: ${text.slice(0, 300)}`);
  const out = JSON.parse(text);
  if (typeof out.image_url !== 'string') throw new Error(`no image_url in ${text.slice(0, 300)}`);
  return out;
}

/** `n` loops calling `once(loop)` until `seconds` pass; returns how many calls completed and each one's time. */
async function loops(n, seconds, once) {
  const end = performance.now() + seconds * 1000;
  const times = [];
  await Promise.all(
    Array.from({ length: n }, async (_, loop) => {
      while (performance.now() < end) {
        const t0 = performance.now();
        await once(loop);
        times.push(performance.now() - t0);
      }
    })
  );
  return times;
}

/** Images a second and CPU per image (ms) of `cpu()` over one timed run of `n` loops. */
async function throughput(n, seconds, once, cpu) {
  const c0 = cpu();
  const t0 = performance.now();
  const times = await loops(n, seconds, once);
  const wall = (performance.now() - t0) / 1000;
  return { rate: times.length / wall, cpuMs: ((cpu() - c0) * 1000) / Math.max(1, times.length) };
}

const selfCpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

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
  const connections = CONNECTIONS + BIG_CONNECTIONS + SMALL_CONNECTIONS;
  const pool = new Pool(gw.base, { connections, keepAliveTimeout: 60_000 });
  let conns = [];
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
    await throughput(CONNECTIONS, 2, rawOnce, selfCpu);
    process.stdout.write(`warm-up (not timed): gateway (multipart) ${slices.join(', ') || 'none'}\n`);
    const g = [];
    const r = [];
    // Alternate in short rounds, the order flipped each round (gateway, raw, raw, gateway…), so a
    // neighbour's burst or a drift of the VM's speed lands on both sides rather than one.
    for (let i = 0; i < ROUNDS; i++) {
      const sides = [
        async () => g.push(await throughput(CONNECTIONS, DURATION_S, gwOnce, gwCpu)),
        async () => r.push(await throughput(CONNECTIONS, DURATION_S, rawOnce, selfCpu)),
      ];
      if (i % 2) sides.reverse();
      for (const side of sides) await side();
      process.stdout.write(
        `round ${i + 1}: gateway (multipart) ${s(g[i])}, raw sharp ${s(r[i])} → ${fmt(g[i].rate / r[i].rate, 2)}×\n`
      );
    }
    const mean = (xs, f) => xs.reduce((acc, x) => acc + f(x), 0) / xs.length;
    const gRate = mean(g, (x) => x.rate);
    const rRate = mean(r, (x) => x.rate);
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
    for (const c of conns) c.close();
    await pool.close();
    await stop(gw.child);
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
