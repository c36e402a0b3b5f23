// The PDF bench: a 2-page HTML document rendered by the chromium engine's warm pool against a
// cold `chromium.launch()` a document (same Chromium, flags, HTML and print options), in
// alternating rounds; then the memory of the pool after 50 and after 500 documents. Run it with
// `npm run bench -- pdf`; see BENCHMARKS.md.
//
// The warm side is the engine itself (dist/vendors/chromium), called as the router calls it.
// `warmSide()` is the one place that knows that: when POST /v1/pdf/generate is on the branch,
// a side that starts the gateway (bench/core/processes.mjs startGateway) and posts `{ html }`
// replaces it, with `pids()` the gateway's process and its browser's.
import { readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { PDFDocument } from 'pdf-lib';
import { chromium } from 'playwright-core';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = (p) => import(pathToFileURL(join(root, 'dist', p)).href);
const DURATION_S = Number(process.env.BENCH_DURATION ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DOCS = Number(process.env.BENCH_PDF_DOCS ?? 500);
const EARLY = Math.round(DOCS / 10);
const EXECUTABLE = process.env.CHROME_PATH || '/usr/bin/chromium';
const PRINT = {
  format: 'A4',
  printBackground: true,
  margin: { top: '12mm', bottom: '12mm', left: '10mm', right: '10mm' },
};

const fmt = (n, d = 0) => n.toFixed(d);
const mib = (b) => `${fmt(b / 1048576, 1)} MiB`;

function line(name, figure, anchor, ratio, goal, ok) {
  process.stdout.write(
    `target ${name}: ${figure} vs ${anchor} → ${fmt(ratio, 2)}× (goal ${goal}) ${ok ? 'ok' : 'short'}\n`
  );
}

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

// /proc: this process's tree (the bench and the browsers it started), for CPU and memory.
function stat(pid) {
  const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return s.slice(s.lastIndexOf(')') + 2).split(' ');
}
function descendants(pid) {
  const kids = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (Number(stat(entry)[1]) === pid) kids.push(Number(entry), ...descendants(Number(entry)));
    } catch {}
  }
  return kids;
}
/** CPU seconds of the bench process and every browser it started, the exited ones included (reaped: cutime). */
function treeCpu() {
  let ticks = 0;
  const self = stat(process.pid);
  ticks += Number(self[11]) + Number(self[12]) + Number(self[13]) + Number(self[14]);
  for (const pid of descendants(process.pid)) {
    try {
      const f = stat(pid);
      ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    } catch {}
  }
  return ticks / 100;
}
function status(pid, key) {
  const m = new RegExp(`^${key}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}
function pss(pid) {
  try {
    const m = /^Pss:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}
/** Node's RSS, the browsers' summed RSS and the whole tree's PSS (shared pages counted once). */
function memory(pids) {
  const [self, ...browser] = pids;
  const sum = (f, list) =>
    list.reduce(
      (a, p) =>
        a
        + (() => {
          try {
            return f(p);
          } catch {
            return 0;
          }
        })(),
      0
    );
  const node = status(self, 'VmRSS');
  const chrome = sum((p) => status(p, 'VmRSS'), browser);
  return { node, chrome, total: node + chrome, pss: sum(pss, pids), processes: browser.length };
}

async function pageCount(data) {
  return (await PDFDocument.load(data)).getPageCount();
}

/** The gateway's engine with the defaults but for recycling: off, so growth shows and is not reset. */
async function warmSide() {
  const vendor = (await dist('vendors/chromium/index.js')).default;
  const log = (await import('pino')).default({ level: 'warn' });
  const inst = await vendor.create(
    { executable_path: EXECUTABLE, concurrency: 2, timeout_seconds: 30, recycle_after: 0, args: [] },
    { instanceId: 'chromium', fetch, publicUrl: 'http://127.0.0.1', dataDir: '/tmp', log }
  );
  const fetchResource = async (url) => {
    throw new Error(`the bench page makes no request (${url})`);
  };
  const signal = new AbortController().signal;
  return {
    async generate(html) {
      const input = { html, format: 'A4', orientation: 'portrait', javascript: false, fetchResource };
      const out = await inst.capabilities['pdf.render'].invoke(input, { signal, deadline: Date.now() + 60_000 });
      return { pages: out.pages, bytes: out.data.length };
    },
    pids: () => [process.pid, ...descendants(process.pid)],
    close: () => inst.close(),
  };
}

/** A browser launched for one document and closed after it: what a renderer without a pool does. */
async function coldSide() {
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
        return { pages: await pageCount(data), bytes: data.length };
      } finally {
        await browser.close();
      }
    },
  };
}

/** Documents a second and CPU a document (bench process and browsers) over `seconds`, one at a time. */
async function throughput(side, html, seconds) {
  const c0 = treeCpu();
  const t0 = performance.now();
  let n = 0;
  while (performance.now() - t0 < seconds * 1000) {
    await side.generate(html);
    n++;
  }
  const wall = (performance.now() - t0) / 1000;
  return { rate: n / wall, cpuMs: ((treeCpu() - c0) * 1000) / Math.max(1, n) };
}

async function main() {
  const version = (
    await chromium
      .launch({ executablePath: EXECUTABLE, headless: true, chromiumSandbox: false })
      .then(async (b) => [b.version(), await b.close()])
  )[0];
  process.stdout.write(
    `bench pdf: node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, `
      + `load ${loadavg()
        .map((l) => fmt(l, 2))
        .join(' ')}; Chromium ${version} (${EXECUTABLE}); `
      + `2-page A4 HTML, one document at a time, ${ROUNDS} rounds × ${DURATION_S} s a side; `
      + `memory after ${EARLY} and ${DOCS} documents\n`
  );
  const html = twoPageHtml();
  const warm = await warmSide();
  const cold = await coldSide();
  try {
    // Both sides must really make the 2-page document before anything is timed.
    for (const [name, side] of [
      ['warm', warm],
      ['cold', cold],
    ]) {
      const out = await side.generate(html);
      if (out.pages !== 2) throw new Error(`${name} made ${out.pages} pages, not 2`);
    }
    await throughput(warm, html, 1);
    const w = [];
    const c = [];
    // Alternate, so a neighbour's burst of CPU lands on both sides rather than one.
    for (let i = 0; i < ROUNDS; i++) {
      w.push(await throughput(warm, html, DURATION_S));
      c.push(await throughput(cold, html, DURATION_S));
      const s = (x) => `${fmt(x.rate, 2)} documents/s (${fmt(x.cpuMs)} ms CPU/document)`;
      process.stdout.write(`round ${i + 1}: warm pool ${s(w[i])}, cold launch ${s(c[i])}\n`);
    }
    await warm.close();

    // A fresh pool for the memory run, so "after 50" and "after 500" count from its first document.
    const pool = await warmSide();
    const samples = {};
    for (let i = 1; i <= DOCS; i++) {
      await pool.generate(html);
      if (i === EARLY || i === DOCS) samples[i] = memory(pool.pids());
    }
    await pool.close();
    for (const [n, m] of Object.entries(samples)) {
      process.stdout.write(
        `after ${n} documents: bench process RSS ${mib(m.node)}, Chromium RSS ${mib(m.chrome)} `
          + `(summed over its ${m.processes} processes), total RSS ${mib(m.total)}, total PSS ${mib(m.pss)}\n`
      );
    }
    process.stdout.write(
      `bench pdf: load at the end ${loadavg()
        .map((l) => fmt(l, 2))
        .join(' ')}\n`
    );

    const mean = (xs, f) => xs.reduce((acc, x) => acc + f(x), 0) / xs.length;
    const wRate = mean(w, (x) => x.rate);
    const cRate = mean(c, (x) => x.rate);
    line(
      'warm-vs-cold',
      `${fmt(wRate, 2)} documents/s (${fmt(mean(w, (x) => x.cpuMs))} ms CPU/document)`,
      `${fmt(cRate, 2)} documents/s (${fmt(mean(c, (x) => x.cpuMs))} ms CPU/document, cold launch)`,
      wRate / cRate,
      '≥ 10×',
      wRate >= 10 * cRate
    );
    const early = samples[EARLY].total;
    const late = samples[DOCS].total;
    line(
      `rss-${DOCS}-vs-${EARLY}`,
      `${mib(late)} after ${DOCS} documents (process + Chromium RSS)`,
      `${mib(early)} after ${EARLY}`,
      late / early,
      '≤ 1.10×',
      late <= 1.1 * early
    );
  } finally {
    await warm.close().catch(() => undefined);
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`bench pdf: ${e?.stack ?? e}\n`);
    process.exit(1);
  }
);
