import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tesseractVendor from '../../../vendors/tesseract/index.js';
import type { PdfOcrOutput } from '../../../core/capabilities/pdf.js';
import { vendorContext } from '../../helpers/vendor-context.js';
import { passwordPdf, pdfOf } from '../../fakes/ocr-pdfs.js';

// The engine as the router calls it, Tesseract included: one instance for the file, so the
// model loads once; each test recognises at most one small page.

const dir = await mkdtemp(join(tmpdir(), 'ocr-engine-'));
const inst = await tesseractVendor.create(
  { concurrency: 1, dpi: 300, max_pages: 5 },
  { ...vendorContext('tesseract'), dataDir: dir }
);
t.teardown(async () => {
  await inst.close?.();
  await rm(dir, { recursive: true, force: true });
});
const ocr = inst.capabilities['pdf.ocr']!;

function read(data: Buffer, languages: string[] = [], signal = new AbortController().signal) {
  return ocr.invoke({ data, languages }, { signal, deadline: Date.now() + 60_000 }) as Promise<PdfOcrOutput>;
}

/** Words, upper case, whatever whitespace OCR put between them. */
const words = (text: string) => text.toUpperCase().split(/\s+/).filter(Boolean).join(' ');

t.test('a scanned page: its words recognised', async (t) => {
  const out = await read(await pdfOf([{ scan: 'HELLO WORLD 2026' }]), ['eng']);
  t.equal(out.pages.length, 1);
  t.equal(out.pages[0]!.source, 'ocr');
  t.equal(words(out.pages[0]!.text), 'HELLO WORLD 2026');
  t.equal(out.text, out.pages[0]!.text);
});

t.test('a mixed document keeps its page order', async (t) => {
  const out = await read(
    await pdfOf([{ text: 'Before the scan' }, { scan: 'Quick brown fox' }, { text: 'After the scan' }])
  );
  t.same(
    out.pages.map((p) => p.source),
    ['text_layer', 'ocr', 'text_layer']
  );
  t.same(
    out.pages.map((p) => words(p.text)),
    ['BEFORE THE SCAN', 'QUICK BROWN FOX', 'AFTER THE SCAN']
  );
  t.same(
    out.text.split('\f'),
    out.pages.map((p) => p.text),
    'the pages, joined by form feeds'
  );
});

t.test('a language with no data package: a client error naming the installed ones', async (t) => {
  const data = await pdfOf([{ text: 'Hallo Welt' }]);
  for (const code of ['xyz', '../eng']) {
    await t.rejects(read(data, ['eng', code]), {
      name: 'VendorFailure',
      kind: 'client_error',
      status: 422,
      message: /No OCR language data for .*installed: .*\beng\b.*npm install @tesseract\.js-data\/<code>/,
    });
  }
});

t.test('corrupt, truncated, encrypted or oversized input: client errors that say so', async (t) => {
  const whole = await pdfOf([{ text: 'Complete' }]);
  const cases: [string, Buffer, number, RegExp][] = [
    ['not a PDF', Buffer.from('hello, I am text'), 422, /cannot be read/],
    ['truncated', whole.subarray(0, 200), 422, /cannot be read/],
    ['password', await passwordPdf(), 422, /encrypted with a password/],
    ['too many pages', await pdfOf(Array.from({ length: 6 }, () => ({ text: 'page' }))), 413, /at most 5/],
  ];
  for (const [what, data, status, message] of cases) {
    await t.rejects(read(data), { name: 'VendorFailure', kind: 'client_error', status, message }, what);
  }
});

t.test('a call whose caller went away while it waited never runs; the one ahead finishes', async (t) => {
  const gone = new AbortController();
  const ahead = read(await pdfOf([{ scan: 'FIRST IN LINE' }]));
  const behind = read(await pdfOf([{ scan: 'NEVER READ' }]), [], gone.signal);
  const reason = new Error('client went away');
  gone.abort(reason);
  await t.rejects(behind, reason);
  t.equal(words((await ahead).text), 'FIRST IN LINE');
});

t.test('no price() of its own: the PDF area prices OCR (test/plugins/pdf/pricing.test.ts)', async (t) => {
  t.equal((ocr as { price?: unknown }).price, undefined);
});

t.test('healthy when the libraries and English data load', async (t) => {
  t.same(await inst.health?.({ signal: new AbortController().signal }), { ok: true });
});
