// long-pole: one of the longest files; started first so it does not run alone at the end (scripts/test-files.mjs).
import t from 'tap';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { builtinVendors } from '../../../vendors/builtin.js';
import { solidPng, pageCount, pageTexts } from '../../fakes/test-pdfs.js';
import { pdfApp, serveFiles } from './setup.js';

// database-independent: Chromium and the egress guard; the area's rows (templates) are plumbing.test.ts's.

// generate on the real embedded `chromium` engine (the system browser). Until that engine is
// merged into this branch these tests are skipped, saying why; the plumbing is tested with a
// stand-in in plumbing.test.ts.
const missing = builtinVendors.some((v) => v.name === 'chromium') ? false : 'the chromium engine is not built in yet';
const FONT = '/usr/share/fonts/truetype/dejavu/DejaVuSerif-Bold.ttf';

const table = (rows: number) =>
  `<table><tr><th>Item</th><th>Price</th></tr>${Array.from(
    { length: rows },
    (_, i) => `<tr><td>Widget ${i + 1}</td><td>${(i + 1) * 3}.00</td></tr>`
  ).join('')}</table>`;

t.test(
  'html with a table and a web font from a loopback server: 2 pages, the text and the font in the PDF',
  { skip: missing },
  async (t) => {
    const { post, download, balance } = await pdfApp(t, { egress: { allow_private: false, allow_loopback: true } });
    const files = { 'font.ttf': readFileSync(FONT) };
    const url = await serveFiles(t, files, { 'font.ttf': 'font/ttf' });
    const html = `<html><head><style>
      @font-face { font-family: Brand; src: url("${url('font.ttf')}") format("truetype"); }
      body { font-family: Brand; } .next { page-break-before: always; }
    </style></head><body><h1>Invoice</h1>${table(5)}<div class="next">Totals</div></body></html>`;
    const before = await balance();
    const res = await post('/v1/pdf/generate', { html });
    t.equal(res.statusCode, 200, res.body);
    t.match(res.json(), { pages: 2 });
    t.equal(res.headers['x-svc-vendor'], 'chromium');
    const pdf = (await download(res.json().pdf_url)).data;
    t.equal(await pageCount(pdf), 2);
    const texts = await pageTexts(pdf);
    t.match(texts[0], /Widget 5/);
    t.match(texts[1], /Totals/);
    t.ok(url.asked.includes('font.ttf'), 'the web font was fetched (through egress)');
    t.match(pdf.toString('latin1'), /DejaVuSerif-Bold/, 'and embedded');
    t.equal(before - (await balance()), 2000 + 2 * 500);
  }
);

t.test(
  'an <img> at a loopback address is refused with the default egress config; the page still renders',
  { skip: missing },
  async (t) => {
    const { post } = await pdfApp(t, { egress: { allow_private: false, allow_loopback: false } });
    const url = await serveFiles(t, { 'pixel.png': await solidPng(4, 4) }, { 'pixel.png': 'image/png' });
    const probe = url('pixel.png');
    const res = await post('/v1/pdf/generate', { html: `<p>Logo:</p><img src="${probe}">` });
    t.equal(res.statusCode, 200, res.body);
    t.equal(res.json().pages, 1);
    // The loopback server would have been asked through the guard only: nothing reached it.
    t.same(url.asked, []);
  }
);

t.test('a url at a private address is 400 before anything is charged', { skip: missing }, async (t) => {
  const { post, balance, results } = await pdfApp(t, { egress: { allow_private: false, allow_loopback: false } });
  const before = await balance();
  for (const url of ['http://127.0.0.1:9/', 'http://169.254.169.254/latest/meta-data/', 'http://192.168.1.1/']) {
    const res = await post('/v1/pdf/generate', { url });
    t.equal(res.statusCode, 400, res.body);
    t.match(res.json().error, { code: 'validation_failed', param: 'url' });
  }
  t.equal(await balance(), before);
  t.equal(await results(), 0);
});

t.test('format and orientation: Letter landscape is 792 x 612 points', { skip: missing }, async (t) => {
  const { post, download } = await pdfApp(t);
  const res = await post('/v1/pdf/generate', { html: '<p>x</p>', format: 'Letter', orientation: 'landscape' });
  t.equal(res.statusCode, 200, res.body);
  const { PDFDocument } = await import('pdf-lib');
  const page = (await PDFDocument.load((await download(res.json().pdf_url)).data)).getPage(0);
  t.same([Math.round(page.getWidth()), Math.round(page.getHeight())], [792, 612]);
});

t.test(
  "a url whose page redirects to a refused address: the guard's 400 reaches the caller, nothing charged",
  { skip: missing },
  async (t) => {
    // 127.0.0.1 is allowed by name; the redirect goes to `localhost`, a loopback name that is not.
    const { post, balance } = await pdfApp(t, {
      egress: { allow_private: false, allow_loopback: false, allow_hosts: ['127.0.0.1'] },
    });
    const target = createServer((_req, res) => res.end('<p>inside</p>'));
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    t.teardown(() => new Promise<void>((resolve) => (target.close(() => resolve()), target.closeAllConnections())));
    let reached = 0;
    target.on('request', () => reached++);
    const hop = createServer((_req, res) => {
      res.writeHead(302, { location: `http://localhost:${(target.address() as AddressInfo).port}/` }).end();
    });
    await new Promise<void>((resolve) => hop.listen(0, '127.0.0.1', resolve));
    t.teardown(() => new Promise<void>((resolve) => (hop.close(() => resolve()), hop.closeAllConnections())));
    const before = await balance();
    const res = await post('/v1/pdf/generate', { url: `http://127.0.0.1:${(hop.address() as AddressInfo).port}/` });
    t.equal(res.statusCode, 400, res.body);
    t.equal(res.json().error.code, 'validation_failed');
    t.match(res.json().error.message, /loopback/);
    t.equal(reached, 0, 'the redirect target was never asked');
    t.equal(await balance(), before, 'nothing charged');
  }
);
