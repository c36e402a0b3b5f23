import t from 'tap';
import pino from 'pino';
import { PdfWorkers } from '../../../vendors/tesseract/pdf-workers.js';
import { pdfOf, scannedA4 } from '../../fakes/ocr-pdfs.js';
import { settlesAtOnce, until } from '../../helpers/wait.js';

// The PDF worker threads: made when needed, a document in one of them, and a caller going away
// in the middle of a page. The scanned A4 page takes a second or more to draw: long enough to
// abort inside it.

const log = pino({ level: 'silent' });
const live = new AbortController().signal;

function pool(t: Tap, concurrency: number): PdfWorkers {
  const pdf = new PdfWorkers(concurrency, log);
  t.teardown(() => pdf.close());
  return pdf;
}
type Tap = typeof t;

t.test('threads made on demand, up to one a slot; the caller keeps its bytes', async (t) => {
  const pdf = pool(t, 2);
  t.equal(pdf.alive, 0, 'none before the first document');
  const data = await pdfOf([{ text: 'First page' }, { text: 'Second page' }]);
  const a = await pdf.open(data, live);
  t.equal(pdf.alive, 1);
  t.equal(data.length > 0 && data.subarray(0, 5).toString(), '%PDF-', 'a copy went to the worker, not these bytes');
  const b = await pdf.open(data, live);
  t.equal(pdf.alive, 2, 'a second document while the first is open: a second thread');
  const c = await pdf.open(data, live);
  t.equal(pdf.alive, 2, 'no more threads than slots');
  t.same(await Promise.all([a.text(1, live), b.text(2, live), c.text(1, live)]), [
    'First page',
    'Second page',
    'First page',
  ]);
  t.equal(a.pages, 2);
  await Promise.all([a.close(), b.close(), c.close()]);
  const d = await pdf.open(data, live);
  t.equal(pdf.alive, 2, 'idle threads are kept and used again');
  t.equal(await d.text(2, live), 'Second page');
});

t.test('a caller gone mid-page: rejected at once; its thread ended, the next document gets another', async (t) => {
  const pdf = pool(t, 1);
  const scan = await pdf.open(await scannedA4(), live);
  t.equal(pdf.alive, 1);
  const gone = new AbortController();
  const reason = new Error('client went away');
  const page = scan.render(1, 150, gone.signal);
  let atOnce: Promise<boolean> | undefined;
  setImmediate(() => {
    gone.abort(reason);
    atOnce = settlesAtOnce(page);
  });
  await t.rejects(page, reason);
  t.equal(await atOnce, true, 'did not wait for the page to be drawn');
  t.equal(pdf.alive, 0, 'the thread drawing it was ended');
  await t.rejects(scan.text(1, live), { name: 'VendorFailure', kind: 'unavailable' }, 'the document went with it');
  const next = await pdf.open(await pdfOf([{ text: 'Fresh thread' }]), live);
  t.equal(await next.text(1, live), 'Fresh thread');
  t.equal(pdf.alive, 1);
});

t.test("one caller's abort on a shared thread leaves the other callers' documents alone", async (t) => {
  const pdf = pool(t, 1);
  const scan = await pdf.open(await scannedA4(), live);
  const other = await pdf.open(await pdfOf([{ text: 'Someone else' }]), live);
  const gone = new AbortController();
  const reason = new Error('client went away');
  const page = scan.render(1, 150, gone.signal);
  const text = other.text(1, live);
  setImmediate(() => gone.abort(reason));
  await t.rejects(page, reason);
  t.equal(await text, 'Someone else');
  t.equal(pdf.alive, 1, 'the thread kept');
  const png = await other.render(1, 72, live);
  t.equal(png.subarray(1, 4).toString(), 'PNG');
});

t.test('closed: requests under way fail, no thread made again', async (t) => {
  const pdf = new PdfWorkers(1, log);
  const scan = await pdf.open(await scannedA4(), live);
  const page = t.rejects(scan.render(1, 150, live), /closed/);
  await pdf.close();
  await page;
  t.equal(pdf.alive, 0);
  await t.rejects(pdf.open(await pdfOf([{ text: 'Late' }]), live), /closed/);
  t.equal(pdf.alive, 0);
});

t.test(
  'a thread without documents for idleMs is ended (pdfjs leaves the heap); the next document makes another',
  async (t) => {
    const pdf = new PdfWorkers(1, log, 50);
    t.teardown(() => pdf.close());
    const data = await pdfOf([{ text: 'Idle page' }]);
    const doc = await pdf.open(data, live);
    t.equal(await doc.text(1, live), 'Idle page');
    await doc.close();
    await until('the idle thread ended', () => pdf.alive === 0);
    const next = await pdf.open(data, live);
    t.equal(pdf.alive, 1);
    t.equal(await next.text(1, live), 'Idle page', 'read on a fresh thread');
  }
);
