// long-pole: one of the longest files; started first so it does not run alone at the end (scripts/test-files.mjs).
import t from 'tap';
import { PDFDocument } from 'pdf-lib';
import { runningTasks } from '../../../core/isolation/worker-pool.js';
import { until } from '../../helpers/wait.js';
import { makePdf } from '../../fakes/test-pdfs.js';
import { pdfApp, serveFiles } from './setup.js';

// database-independent: pdf-lib in workers; the charge is core/wallet's tests', on both.

// pdf-lib's work off the event loop and bounded (issue 27): the gateway answers other calls while a
// heavy split runs, the engine's page and byte caps refuse a call before its work, and documents
// pdf-lib cannot walk are the caller's 422, not our 500.

/** A PDF of `pages` blank pages (cheap to make; what costs is copying them). */
async function blankPdf(pages: number): Promise<Buffer> {
  const doc = await PDFDocument.create();
  for (let i = 0; i < pages; i++) doc.addPage([200, 200]);
  return Buffer.from(await doc.save());
}

/** A PDF whose page tree's kid is its own parent. */
function circularPdf(): Buffer {
  const objs = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Pages /Parent 2 0 R /Kids [2 0 R] /Count 1 >>',
  ];
  let body = '%PDF-1.7\n';
  const offsets: number[] = [];
  objs.forEach((o, i) => {
    offsets.push(body.length);
    body += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = body.length;
  body += `xref\n0 ${objs.length + 1}\n0000000000 65535 f \n`;
  for (const off of offsets) body += `${String(off).padStart(10, '0')} 00000 n \n`;
  body += `trailer\n<< /Size ${objs.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body);
}

t.test('a header-only PDF and a circular page tree sent to merge are 422, nothing charged', async (t) => {
  const { post, balance, results } = await pdfApp(t);
  const url = await serveFiles(t, { header: '%PDF-1.7\n', loop: circularPdf(), ok: await makePdf(1) });
  const before = await balance();
  for (const name of ['header', 'loop']) {
    const res = await post('/v1/pdf/merge', { urls: [url('ok'), url(name)] });
    t.equal(res.statusCode, 422, `${name}: ${res.body}`);
    t.match(res.json().error, { code: 'unprocessable', message: /Document 2 .*(no pages|not a readable PDF)/ });
  }
  t.equal(await balance(), before);
  t.equal(await results(), 0);
});

t.test("the engine's caps (pages in, pages out, output bytes) refuse with 413 naming the cap", async (t) => {
  const { post, balance, results } = await pdfApp(t, {
    vendors: [
      { id: 'pdf-lib', use: 'pdf-lib', config: { max_pages_in: 8, max_pages_out: 12, max_output_bytes: 4096 } },
    ],
  });
  const url = await serveFiles(t, { ten: await blankPdf(10), five: await blankPdf(5), one: await makePdf(1) });
  const before = await balance();
  const cases = [
    ['/v1/pdf/split', { url: url('ten'), ranges: ['1'] }, /10 pages, over the engine's cap of 8 a document/],
    ['/v1/pdf/split', { url: url('five'), ranges: ['1-', '1-', '1-'] }, /15 pages, over the engine's cap of 12/],
    ['/v1/pdf/merge', { urls: [url('five'), url('five'), url('five')] }, /15 pages, over the engine's cap of 12/],
    ['/v1/pdf/split', { url: url('one'), ranges: ['1', '1', '1', '1', '1', '1', '1', '1'] }, /cap of 4096 bytes/],
  ] as const;
  for (const [path, body, message] of cases) {
    const res = await post(path, body);
    t.equal(res.statusCode, 413, res.body);
    t.match(res.json().error, { code: 'payload_too_large', message });
  }
  t.equal(await balance(), before, 'nothing charged');
  t.equal(await results(), 0, 'nothing stored');
  const ok = await post('/v1/pdf/split', { url: url('five'), ranges: ['1-', '2-'] });
  t.equal(ok.statusCode, 200, 'within the caps it works');
});

t.test('a balance read answers while a heavy split runs (the split is off the event loop)', async (t) => {
  const { app, post, auth } = await pdfApp(t);
  const url = await serveFiles(t, { big: await blankPdf(3000) });
  const order: string[] = [];
  const splitting = post('/v1/pdf/split', { url: url('big'), ranges: ['1-', '1-', '1-'] }).then((r) => {
    order.push('split');
    return r;
  });
  await until('the split running in a pdf-lib worker', () => runningTasks('pdf-lib') > 0 || order.length > 0);
  t.same(order, [], 'the split is still running');
  const read = await app.inject({ method: 'GET', url: '/v1/account/balance', headers: auth });
  order.push('balance');
  t.equal(read.statusCode, 200);
  const split = await splitting;
  t.equal(split.statusCode, 200, split.body);
  t.same(
    split.json().parts.map((p: { pages: number }) => p.pages),
    [3000, 3000, 3000]
  );
  t.same(order, ['balance', 'split'], 'the balance read did not wait for the split');
});

t.test('a split that runs until its timeout is charged what it reserved and cools the engine for no one', async (t) => {
  const { app, post, balance } = await pdfApp(t, {
    plugins: { pdf: { timeout_seconds: 1 } },
    vendors: [{ id: 'pdf-lib', use: 'pdf-lib', config: { max_pages_out: 100_000 } }],
  });
  const url = await serveFiles(t, { big: await blankPdf(10_000) });
  const before = await balance();
  const res = await post('/v1/pdf/split', { url: url('big'), ranges: ['1-', '1-', '1-', '1-', '1-'] });
  t.equal(res.statusCode, 504, res.body);
  t.match(res.json().error, { code: 'vendor_timeout' });
  t.equal(before - (await balance()), 1000, 'charged the reserved price (0.001 USD), not nothing');
  t.notOk(app.svc.router.cooldowns.snapshot()['pdf-lib'], 'the engine is not cooling down');
  t.ok(app.svc.router.available('pdf.split'), 'so it is available to every other account');
});
