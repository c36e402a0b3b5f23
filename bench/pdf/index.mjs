// The PDF bench: a 2-page HTML document through the gateway's POST /v1/pdf/generate (its warm
// Chromium pool) against a cold `chromium.launch()` a document in this process (same Chromium,
// flags, HTML and print options), in alternating rounds; then the memory of a fresh gateway and
// its browser after 50 and after 500 documents, each also at rest (REST_S idle seconds after the
// document: the gateway's idle collection has run). Run it with `npm run bench -- pdf`; see
// BENCHMARKS.md, `pdf`.
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { PDFDocument } from 'pdf-lib';
import { chromium } from 'playwright-core';
import { Pool } from 'undici';
import { activate, cleanup, startGateway, stop } from '../core/processes.mjs';
import { calibrationLine } from '../lib/calibration.mjs';
import { fmt, line, load, mib, treeCpu, treeMemory } from '../lib/measure.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = (p) => import(pathToFileURL(join(root, 'dist', p)).href);
const DURATION_S = Number(process.env.BENCH_DURATION ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DOCS = Number(process.env.BENCH_PDF_DOCS ?? 500);
const EARLY = Math.round(DOCS / 10);
// Two of the gateway's idle-collection windows (server.idle_gc_seconds, 10) and a margin: under a
// steady render the old generation holds garbage up to the CLI's --initial-old-space-size; what
// stays after an idle collection is what the renders kept.
const REST_S = Number(process.env.BENCH_PDF_REST_S ?? 25);
const EXECUTABLE = process.env.CHROME_PATH || '/usr/bin/chromium';
// What the chromium engine prints with (vendors/chromium/render.ts): the cold side prints alike.
const PRINT = {
  format: 'A4',
  printBackground: true,
  margin: { top: '12mm', bottom: '12mm', left: '10mm', right: '10mm' },
};

/** An invoice whose 45 rows and heading fill two A4 pages, with a background the print keeps. */
function twoPageHtml() {
  const rows = Array.from(
    { length: 45 },
    (_, i) => `<tr><td>${i + 1}</td><td>Item ${i + 1}</td><td>${(i * 7.25).toFixed(2)}</td></tr>`
  );
  return `<!doctype html><html><head><style>
    body { font-family: sans-serif; } h1 { background: #eef; }
    td { border: 1px solid #888; padding: 6px; font-size: 16px; }
  </style></head><body><h1>Invoice</h1><table>${rows.join('')}</table></body></html>`;
}

async function pageCount(data) {
  return (await PDFDocument.load(data)).getPageCount();
}

/**
 * The gateway from dist with the defaults but for its renderer's recycling, off: the memory
 * target is about the pool's own growth, which a restart every 1000 documents would hide.
 */
async function gatewaySide() {
  const gw = await startGateway(root, {
    config: [
      'wallet: { trial_credit_usd: 100000 }',
      'vendors:',
      `  - { id: chromium, use: chromium, config: { executable_path: ${JSON.stringify(EXECUTABLE)}, recycle_after: 0 } }`,
    ],
  });
  const pool = new Pool(gw.base, { connections: 2, keepAliveTimeout: 60_000 });
  const key = await activate(gw.base);
  return {
    gw,
    /** POST /v1/pdf/generate, then GET the pdf_url it answers: the document in the client's hand. */
    async generate(html) {
      const res = await pool.request({
        method: 'POST',
        path: '/v1/pdf/generate',
        body: JSON.stringify({ html }),
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`/v1/pdf/generate answered ${res.statusCode}: ${text.slice(0, 300)}`);
      const out = JSON.parse(text);
      const url = new URL(out.pdf_url);
      if (url.origin !== gw.base) throw new Error(`pdf_url ${out.pdf_url} is not on the gateway (${gw.base})`);
      const file = await pool.request({ method: 'GET', path: url.pathname + url.search });
      const data = Buffer.from(await file.body.arrayBuffer());
      if (file.statusCode !== 200 || data.length !== out.bytes)
        throw new Error(`pdf_url answered ${file.statusCode} with ${data.length} bytes, not ${out.bytes}`);
      return { pages: out.pages, bytes: data.length, data };
    },
    cpu: () => treeCpu(gw.child.pid),
    close: async () => {
      await pool.close();
      await stop(gw.child);
    },
  };
}

/** A browser launched for one document and closed after it: what a renderer without a pool does. */
async function coldSide(skip) {
  const { CHROMIUM_FLAGS } = await dist('vendors/chromium/pool.js');
  return {
    async generate(html) {
      const browser = await chromium.launch({
        executablePath: EXECUTABLE,
        headless: true,
        chromiumSandbox: false,
        args: CHROMIUM_FLAGS,
      });
      try {
        const page = await (await browser.newContext({ javaScriptEnabled: false })).newPage();
        await page.setContent(html, { waitUntil: 'load' });
        const data = await page.pdf(PRINT);
        return { pages: await pageCount(data), bytes: data.length, data };
      } finally {
        await browser.close();
      }
    },
    // This process and the browsers it launched, not the gateway's tree (idle while the cold side runs).
    cpu: () => treeCpu(process.pid, skip()),
  };
}

/** Documents a second and CPU a document over `seconds`, one document at a time. */
async function throughput(side, html, seconds) {
  const c0 = side.cpu();
  const t0 = performance.now();
  let n = 0;
  while (performance.now() - t0 < seconds * 1000) {
    const out = await side.generate(html);
    if (out.pages !== 2) throw new Error(`a document came out with ${out.pages} pages, not 2`);
    n++;
  }
  const wall = (performance.now() - t0) / 1000;
  return { rate: n / wall, cpuMs: ((side.cpu() - c0) * 1000) / Math.max(1, n) };
}

async function main() {
  const version = (
    await chromium
      .launch({ executablePath: EXECUTABLE, headless: true, chromiumSandbox: false })
      .then(async (b) => [b.version(), await b.close()])
  )[0];
  process.stdout.write(
    `bench pdf: node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${load()}; `
      + `Chromium ${version} (${EXECUTABLE}); 2-page A4 HTML, one document at a time, `
      + `${ROUNDS} rounds × ${DURATION_S} s a side; gateway memory after ${EARLY} and ${DOCS} documents\n`
  );
  process.stdout.write(`${await calibrationLine()}\n`);
  const html = twoPageHtml();
  let warm = await gatewaySide();
  const cold = await coldSide(() => new Set([warm.gw.child.pid]));
  try {
    // Both sides must really make the 2-page document before anything is timed.
    for (const [name, side] of [
      ['gateway', warm],
      ['cold', cold],
    ]) {
      const out = await side.generate(html);
      const pages = await pageCount(out.data);
      if (out.pages !== 2 || pages !== 2) throw new Error(`${name} made ${out.pages} (read: ${pages}) pages, not 2`);
    }
    await throughput(warm, html, 1);
    const w = [];
    const c = [];
    const s = (x) => `${fmt(x.rate, 2)} documents/s (${fmt(x.cpuMs)} ms CPU/document)`;
    // Alternate, so a neighbour's burst of CPU lands on both sides rather than one.
    for (let i = 0; i < ROUNDS; i++) {
      w.push(await throughput(warm, html, DURATION_S));
      c.push(await throughput(cold, html, DURATION_S));
      process.stdout.write(`round ${i + 1}: gateway ${s(w[i])}, cold launch ${s(c[i])}\n`);
    }
    await warm.close();

    // A fresh gateway for the memory run, so "after 50" and "after 500" count from its first document.
    warm = await gatewaySide();
    const samples = {};
    const rest = {};
    for (let i = 1; i <= DOCS; i++) {
      const out = await warm.generate(html);
      if (out.pages !== 2) throw new Error(`document ${i} came out with ${out.pages} pages, not 2`);
      // Every tenth, so the trend shows: a plateau, or growth a document.
      if (i % EARLY === 0 || i === DOCS) samples[i] = treeMemory(warm.gw.child.pid);
      if (i === EARLY || i === DOCS) {
        await new Promise((r) => setTimeout(r, REST_S * 1000));
        rest[i] = treeMemory(warm.gw.child.pid);
      }
    }
    await warm.close();
    for (const n of [EARLY, DOCS]) {
      const m = samples[n];
      process.stdout.write(
        `after ${n} documents: gateway RSS ${mib(m.node)} (${REST_S} s later, at rest: ${mib(rest[n].node)}), `
          + `Chromium RSS ${mib(m.children)} (summed over its ${m.processes} processes), total RSS ${mib(m.total)}, `
          + `total PSS ${mib(m.pss)}\n`
      );
    }
    const trend = (f) =>
      Object.values(samples)
        .map((m) => fmt(f(m) / 1048576))
        .join(' ');
    process.stdout.write(
      `MiB after ${Object.keys(samples).join(', ')} documents: gateway RSS ${trend((m) => m.node)}; `
        + `Chromium RSS ${trend((m) => m.children)}; total PSS ${trend((m) => m.pss)}\n`
    );
    process.stdout.write(`bench pdf: load at the end ${load()}\n`);

    const mean = (xs, f) => xs.reduce((acc, x) => acc + f(x), 0) / xs.length;
    const wRate = mean(w, (x) => x.rate);
    const cRate = mean(c, (x) => x.rate);
    line(
      'warm-vs-cold',
      `${fmt(wRate, 2)} documents/s (${fmt(mean(w, (x) => x.cpuMs))} ms CPU/document, gateway)`,
      `${fmt(cRate, 2)} documents/s (${fmt(mean(c, (x) => x.cpuMs))} ms CPU/document, cold launch)`,
      wRate / cRate,
      '≥ 10×',
      wRate >= 10 * cRate
    );
    // The gateway's own RSS: summed with Chromium's (~1 GB, flat) a growth of the gateway's would hide.
    // At rest: the growth a steady render shows before V8's first full collection is garbage, not kept.
    const early = rest[EARLY].node;
    const late = rest[DOCS].node;
    line(
      `rss-${DOCS}-vs-${EARLY}`,
      `gateway RSS ${mib(late)} at rest after ${DOCS} documents`,
      `${mib(early)} at rest after ${EARLY}`,
      late / early,
      '≤ 1.10×',
      late <= 1.1 * early
    );
  } finally {
    await warm.close().catch(() => undefined);
  }
}

main().then(
  () => {
    cleanup();
    process.exit(0);
  },
  (e) => {
    process.stderr.write(`bench pdf: ${e?.stack ?? e}\n`);
    cleanup();
    process.exit(1);
  }
);
