// The stall bench: does one tenant's heavy call hold up everyone else's cheap ones? A gateway
// from dist with its embedded engines; a probe reads GET /v1/account/balance one request at a
// time, first idle, then while each heavy operation runs (background removal, a 40-MP resize,
// a 10,000-page split, a 50-document merge, OCR of a scanned page, a Chromium render, a deeply
// nested template), after one warm-up call of each (printed, in no target) and a few idle seconds,
// and compares each phase's p99 with the p99 of all the idle reads of the same run; then,
// a minute after the last phase, the gateway's RSS with its idle RSS a minute after the warm-ups. Inputs are made here and
// served from 127.0.0.1; nothing else is contacted. Run it with `npm run bench -- stall`; see
// BENCHMARKS.md, `stall`.
import { createServer } from 'node:http';
import { cpus } from 'node:os';
import { PDFDocument } from 'pdf-lib';
import sharp from 'sharp';
import { Pool } from 'undici';
import { activate, cleanup, rssBytes, startGateway, stop } from '../core/processes.mjs';
import { calibrationLine } from '../lib/calibration.mjs';
import { fmt, line, load, mib, percentile, treeCpu } from '../lib/measure.mjs';

const root = new URL('../..', import.meta.url).pathname;
const IDLE_S = Number(process.env.BENCH_STALL_IDLE_S ?? 10);
// An idle window this long before each phase too: the idle p99 pools them all, so the anchor
// covers the whole run's neighbours (the load moves by 2x within minutes on the shared machine).
const GAP_S = Number(process.env.BENCH_STALL_GAP_S ?? 4);
// A phase lasts at least this long: a heavy call that ends sooner is sent again, one at a time.
const WINDOW_S = Number(process.env.BENCH_STALL_WINDOW_S ?? 5);
// No phase runs longer than this (its call then counts as stalled to the end): the bench stops by itself.
const PHASE_MAX_S = Number(process.env.BENCH_STALL_PHASE_MAX_S ?? 240);
const SETTLE_S = Number(process.env.BENCH_STALL_SETTLE_S ?? 60);
// Only these phases (comma-separated names, e.g. `resize-40mp`), warm-ups included: a change to one
// engine is measured in a minute or two instead of the whole run. Empty: every phase.
const ONLY = (process.env.BENCH_STALL_PHASES ?? '')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const PROBE_GAP_MS = 10;
const STALL_GOAL = 3;
const RSS_GOAL = 1.2;

const p99 = (xs) => percentile(xs, 0.99);

/** Serves the inputs by path on 127.0.0.1 (the gateway fetches them through its egress guard). */
async function fileServer(files) {
  const server = createServer((req, res) => {
    const body = files.get(req.url);
    if (!body) return res.writeHead(404).end();
    res.writeHead(200, { 'content-length': body.length }).end(body);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { base: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) };
}

async function blankPdf(pages) {
  const doc = await PDFDocument.create();
  for (let i = 0; i < pages; i++) doc.addPage([595, 842]);
  return Buffer.from(await doc.save());
}

/** One A4 page that is only a picture of text: OCR must rasterise and recognise it. */
async function scannedPdf() {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="1240" height="1754"><rect width="100%" height="100%" fill="white"/>${Array.from(
    { length: 20 },
    (_, i) =>
      `<text x="100" y="${160 + i * 70}" font-family="DejaVu Sans" font-size="40">Line ${i + 1} of the scanned invoice</text>`
  ).join('')}</svg>`;
  const png = await sharp(Buffer.from(svg)).png().toBuffer();
  const doc = await PDFDocument.create();
  const page = doc.addPage([595, 842]);
  page.drawImage(await doc.embedPng(png), { x: 0, y: 0, width: 595, height: 842 });
  return Buffer.from(await doc.save());
}

/** A smooth 8000×5000 (40-MP) JPEG: every pixel must be decoded to resize it. */
async function photo(width, height) {
  const noise = await sharp({
    create: {
      width: 400,
      height: 250,
      channels: 3,
      background: '#808080',
      noise: { type: 'gaussian', mean: 128, sigma: 60 },
    },
  })
    .png()
    .toBuffer();
  return sharp(noise).resize(width, height).jpeg({ quality: 85 }).toBuffer();
}

function invoiceHtml() {
  const rows = Array.from({ length: 45 }, (_, i) => `<tr><td>${i + 1}</td><td>Item ${i + 1}</td></tr>`);
  return `<!doctype html><html><body><h1>Invoice</h1><table>${rows.join('')}</table></body></html>`;
}

async function main() {
  process.stdout.write(
    `bench stall: node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${load()}; `
      + `GET /v1/account/balance one at a time (${PROBE_GAP_MS} ms apart): ${IDLE_S} s idle, then during each heavy `
      + `operation (at least ${WINDOW_S} s, at most ${PHASE_MAX_S}), after one warm-up call of each, each after ${GAP_S} s idle; `
      + `RSS ${SETTLE_S} s after the last\n`
  );
  process.stdout.write(`${await calibrationLine()}\n`);
  const t0 = performance.now();
  const tenThousand = await blankPdf(10_000);
  const twoHundred = await blankPdf(200);
  const files = new Map([
    ['/10000-pages.pdf', tenThousand],
    ['/scan.pdf', await scannedPdf()],
    ['/40mp.jpg', await photo(8000, 5000)],
    ...Array.from({ length: 50 }, (_, i) => [`/doc-${i}.pdf`, twoHundred]),
  ]);
  const portrait = (await photo(1024, 768)).toString('base64');
  process.stdout.write(
    `inputs made in ${fmt((performance.now() - t0) / 1000, 1)} s: 10,000-page PDF ${mib(tenThousand.length)}, `
      + `40-MP JPEG ${mib(files.get('/40mp.jpg').length)}, 50 × 200-page PDFs\n`
  );
  const fs = await fileServer(files);
  // An image call and a removal may take up to a phase's bound: on a loaded machine the first removal
  // (the model's load) runs past the defaults (60 s, 120 s), and a 504 would end its phase early.
  const gw = await startGateway(root, {
    config: [
      'wallet: { trial_credit_usd: 100000 }',
      `plugins: { image: { timeout_seconds: ${PHASE_MAX_S} } }`,
      'vendors:',
      `  - { id: imgly-background, use: imgly-background, config: { timeout_seconds: ${PHASE_MAX_S} } }`,
      // A host shared between tenants: the browser's scheduling group lowered (docs/pdf.md, group_nice).
      '  - { id: chromium, use: chromium, config: { group_nice: 5 } }',
    ],
  });
  const key = await activate(gw.base);
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const probePool = new Pool(gw.base, { connections: 1 });
  const heavyPool = new Pool(gw.base, { connections: 1, headersTimeout: 0, bodyTimeout: 0 });
  const pid = gw.child.pid;

  /** Balance reads until `done()`; the latencies in ms (a read cut at the phase's end counts what it waited). */
  async function probe(done) {
    const ms = [];
    while (!done()) {
      const t = performance.now();
      try {
        const res = await probePool.request({
          method: 'GET',
          path: '/v1/account/balance',
          headers: auth,
          signal: AbortSignal.timeout(PHASE_MAX_S * 1000),
        });
        await res.body.text();
        if (res.statusCode !== 200) throw new Error(`balance answered ${res.statusCode}`);
      } catch (e) {
        if (e?.name !== 'TimeoutError') throw e; // a read the gateway never answered: it waited all that time
      }
      ms.push(performance.now() - t);
      await new Promise((r) => setTimeout(r, PROBE_GAP_MS));
    }
    return ms;
  }

  async function heavy(method, path, body) {
    const res = await heavyPool.request({
      method,
      path,
      headers: auth,
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(PHASE_MAX_S * 1000),
    });
    const text = await res.body.text();
    return { status: res.statusCode, text };
  }

  const template = await heavy('POST', '/v1/pdf/templates', {
    name: 'deep',
    // Four sections deep over a 100-item list: 10^8 iterations for an empty output.
    html: '{{#a}}{{#a}}{{#a}}{{#a}}{{/a}}{{/a}}{{/a}}{{/a}}',
  });
  const templateId = template.status === 200 ? JSON.parse(template.text).template_id : undefined;

  const allOps = [
    [
      'remove-background',
      () =>
        heavy('POST', '/v1/image/process', { input: { base64: portrait }, operations: [{ op: 'remove_background' }] }),
    ],
    [
      'resize-40mp',
      () => heavy('POST', '/v1/image/process', { input: { url: `${fs.base}/40mp.jpg` }, width: 1000, format: 'webp' }),
    ],
    ['split-10000-pages', () => heavy('POST', '/v1/pdf/split', { url: `${fs.base}/10000-pages.pdf`, ranges: ['1-'] })],
    [
      'merge-50-documents',
      () => heavy('POST', '/v1/pdf/merge', { urls: Array.from({ length: 50 }, (_, i) => `${fs.base}/doc-${i}.pdf`) }),
    ],
    ['ocr', () => heavy('POST', '/v1/pdf/ocr', { url: `${fs.base}/scan.pdf` })],
    ['chromium-render', () => heavy('POST', '/v1/pdf/generate', { html: invoiceHtml() })],
    [
      'deep-template',
      () =>
        templateId
          ? heavy('POST', '/v1/pdf/generate', {
              template_id: templateId,
              template_vars: { a: Array.from({ length: 100 }, (_, i) => i) },
            })
          : Promise.resolve({ status: template.status, text: `template refused at creation: ${template.text}` }),
    ],
  ];
  const unknown = ONLY.filter((n) => !allOps.some(([name]) => name === n));
  if (unknown.length) throw new Error(`BENCH_STALL_PHASES: no phase ${unknown.join(', ')}`);
  const ops = ONLY.length ? allOps.filter(([name]) => ONLY.includes(name)) : allOps;

  try {
    // Idle: the same probe with nothing else running, after a second of warm-up.
    const stopAt = performance.now() + 1000;
    await probe(() => performance.now() > stopAt);
    const idle = [];
    /** An idle window of `seconds`: its reads join the pooled idle ones. */
    async function idleWindow(label, seconds) {
      const cpu0 = treeCpu(pid);
      const until = performance.now() + seconds * 1000;
      const ms = await probe(() => performance.now() > until);
      idle.push(...ms);
      process.stdout.write(
        `${label}: ${ms.length} reads (${fmt(ms.length / seconds)}/s, ${fmt(((treeCpu(pid) - cpu0) * 1e6) / ms.length)} `
          + `µs gateway CPU a read), p99 ${fmt(p99(ms), 1)} ms; load ${load()}\n`
      );
    }
    await idleWindow('idle', IDLE_S);
    const coldRss = rssBytes(pid);
    process.stdout.write(`idle: gateway RSS ${mib(coldRss)} (no engine used yet)\n`);

    /**
     * One call of the operation before its idle window, outside every figure: what a process does once
     * (undici loaded for the first URL input, playwright-core and the browser's launch, a model's load)
     * is not a stall a tenant can repeat. Its own p99 is printed, so the one-time cost stays in view.
     */
    async function warmUp(name, run) {
      const start = performance.now();
      let finished = false;
      const warm = run().finally(() => {
        finished = true;
      });
      const ms = await probe(() => finished);
      const answer = await warm;
      process.stdout.write(
        `warm-up ${name} (once a process, not in its target): status ${answer.status} in `
          + `${fmt((performance.now() - start) / 1000, 1)} s; ${ms.length} reads, p99 ${fmt(p99(ms), 1)} ms, `
          + `max ${fmt(Math.max(...ms), 1)} ms; load ${load()}\n`
      );
    }

    // Every operation once, then the same settling time as at the end: the idle RSS the last one is
    // compared with is a gateway that has loaded what each operation loads once a process (libvips,
    // playwright-core, pdf-lib, tesseract's worker code), so the target measures what the heavy
    // phases leave behind, not the libraries. The RSS before any engine ran is printed beside it.
    for (const [name, run] of ops) await warmUp(name, run);
    process.stdout.write(`waiting ${SETTLE_S} s for the gateway's memory to settle after the warm-ups\n`);
    await new Promise((r) => setTimeout(r, SETTLE_S * 1000));
    const idleRss = rssBytes(pid);
    process.stdout.write(`idle after the warm-ups: gateway RSS ${mib(idleRss)}\n`);

    const results = [];
    for (const [name, run] of ops) {
      await idleWindow(`idle before ${name}`, GAP_S);
      const cpu0 = treeCpu(pid);
      const start = performance.now();
      let finished = false;
      const answers = [];
      const work = (async () => {
        try {
          do answers.push(await run());
          while (performance.now() - start < WINDOW_S * 1000);
        } catch (e) {
          answers.push({ status: 'error', text: String(e?.message ?? e) });
        } finally {
          finished = true;
        }
      })();
      const ms = await probe(() => finished);
      await work;
      const seconds = (performance.now() - start) / 1000;
      const cpuMs = ((treeCpu(pid) - cpu0) * 1000) / answers.length;
      const statuses = [...new Set(answers.map((a) => a.status))].join(', ');
      const failed = answers.find((a) => a.status !== 200);
      process.stdout.write(
        `${name}: ${answers.length} call${answers.length === 1 ? '' : 's'} (status ${statuses}) in ${fmt(seconds, 1)} s `
          + `(${fmt(answers.length / seconds, 2)}/s), ${fmt(cpuMs)} ms gateway CPU/operation; ${ms.length} reads `
          + `(${fmt(ms.length / seconds)}/s), p99 ${fmt(p99(ms), 1)} ms, max ${fmt(Math.max(...ms), 1)} ms; load ${load()}`
          + `${failed ? `; first non-200: ${failed.text.slice(0, 200)}` : ''}\n`
      );
      results.push({ name, p99: p99(ms) });
    }

    process.stdout.write(`waiting ${SETTLE_S} s for the gateway's memory to settle\n`);
    await new Promise((r) => setTimeout(r, SETTLE_S * 1000));
    const afterRss = rssBytes(pid);
    const idleP99 = p99(idle);
    process.stdout.write(
      `bench stall: load at the end ${load()}; idle p99 ${fmt(idleP99, 1)} ms over ${idle.length} reads\n`
    );
    for (const r of results)
      line(
        `stall-${r.name}`,
        `balance p99 ${fmt(r.p99, 1)} ms during it`,
        `idle p99 ${fmt(idleP99, 1)} ms`,
        r.p99 / idleP99,
        `≤ ${STALL_GOAL}×`,
        r.p99 <= STALL_GOAL * idleP99
      );
    line(
      'rss-after',
      `gateway RSS ${mib(afterRss)} ${SETTLE_S} s after the last phase`,
      `idle after one call of each ${mib(idleRss)} (before any, ${mib(coldRss)})`,
      afterRss / idleRss,
      `≤ ${RSS_GOAL}×`,
      afterRss <= RSS_GOAL * idleRss
    );
  } finally {
    await probePool.close().catch(() => undefined);
    await heavyPool.destroy().catch(() => undefined);
    await stop(gw.child);
    await fs.close();
  }
}

main().then(
  () => {
    cleanup();
    process.exit(0);
  },
  (e) => {
    process.stderr.write(`bench stall: ${e?.stack ?? e}\n`);
    cleanup();
    process.exit(1);
  }
);
