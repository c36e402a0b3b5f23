import t from 'tap';
import pino from 'pino';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { readPdf } from '../../../vendors/tesseract/ocr.js';
import { LanguageData } from '../../../vendors/tesseract/languages.js';
import { PdfWorkers } from '../../../vendors/tesseract/pdf-workers.js';
import type { Recognizer } from '../../../vendors/tesseract/recognizer.js';
import { pdfOf } from '../../fakes/ocr-pdfs.js';

// The page walk with a recognizer that records what it is asked instead of running Tesseract:
// which pages go to recognition, and that every page lands at its own index.

const settings = { dpi: 300, maxPages: 50 };
const live = new AbortController().signal;
// One PDF thread for the file: pdfjs loads once.
const pdf = new PdfWorkers(1, pino({ level: 'silent' }));
t.teardown(() => pdf.close());

async function languages(t: Tap) {
  const dir = await mkdtemp(join(tmpdir(), 'ocr-walk-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return new LanguageData(dir);
}
type Tap = typeof t;

/** Answers `page <n>` for the n-th page it is asked about; the drawn image is checked to be a PNG. */
function fakeRecognizer() {
  const asked: string[] = [];
  const recognizer = {
    async recognize(draw: () => Promise<Buffer>, langs: string) {
      const png = await draw();
      if (png.subarray(1, 4).toString() !== 'PNG') throw new Error('not a PNG');
      asked.push(langs);
      return `recognised ${asked.length}\n\n\n`;
    },
  } as unknown as Recognizer;
  return { recognizer, asked };
}

const refuse = {
  recognize: () => Promise.reject(new Error('Tesseract was asked for a page with a text layer')),
} as unknown as Recognizer;

t.test('a text layer is the text, page by page, with no recognition', async (t) => {
  const data = await pdfOf([{ text: 'Invoice 2026-001\nTotal: 42.00 EUR' }, { text: 'Page two says goodbye' }]);
  const out = await readPdf({ data, languages: ['eng'] }, settings, await languages(t), pdf, refuse, live);
  t.same(out.pages, [
    { text: 'Invoice 2026-001\nTotal: 42.00 EUR', source: 'text_layer' },
    { text: 'Page two says goodbye', source: 'text_layer' },
  ]);
  t.equal(out.text, 'Invoice 2026-001\nTotal: 42.00 EUR\fPage two says goodbye', 'pages joined by a form feed');
});

t.test('pages without text, or a negligible layer, are recognised; each stays at its index', async (t) => {
  const doc = await PDFDocument.load(await pdfOf([{ text: 'First' }, { scan: 'x' }, { text: 'Third' }]));
  // A lone page number over a scan is not a text layer worth trusting.
  const page = doc.addPage([360, 72]);
  page.drawText('7', { x: 340, y: 10, size: 8, font: await doc.embedFont(StandardFonts.Helvetica) });
  const data = Buffer.from(await doc.save());
  const { recognizer, asked } = fakeRecognizer();
  const out = await readPdf({ data, languages: ['eng'] }, settings, await languages(t), pdf, recognizer, live);
  t.same(
    out.pages.map((p) => p.source),
    ['text_layer', 'ocr', 'text_layer', 'ocr']
  );
  t.equal(out.pages[0]!.text, 'First');
  t.equal(out.pages[2]!.text, 'Third');
  t.match(out.pages[1]!.text, /^recognised \d$/, 'trailing blank lines trimmed');
  t.same(asked, ['eng', 'eng']);
});

t.test('no language asked means English; repeated ones are asked once', async (t) => {
  const data = await pdfOf([{ scan: 'x' }]);
  const { recognizer, asked } = fakeRecognizer();
  const langs = await languages(t);
  await readPdf({ data, languages: [] }, settings, langs, pdf, recognizer, live);
  await readPdf({ data, languages: ['eng', 'eng'] }, settings, langs, pdf, recognizer, live);
  t.same(asked, ['eng', 'eng']);
});

t.test('more pages than max_pages: 413 naming the cap, before any page is read', async (t) => {
  const data = await pdfOf([{ scan: 'a' }, { scan: 'b' }, { scan: 'c' }]);
  const { recognizer, asked } = fakeRecognizer();
  await t.rejects(
    readPdf({ data, languages: [] }, { dpi: 300, maxPages: 2 }, await languages(t), pdf, recognizer, live),
    {
      name: 'VendorFailure',
      kind: 'client_error',
      status: 413,
      message: /3 pages; OCR reads at most 2 \(max_pages\)/,
    }
  );
  t.same(asked, []);
});

t.test('dpi sets the raster handed to recognition', async (t) => {
  const sharp = (await import('sharp')).default;
  const data = await pdfOf([{ scan: 'x' }]); // a 5 x 1 inch page
  const sizes: string[] = [];
  const recognizer = {
    async recognize(draw: () => Promise<Buffer>) {
      const meta = await sharp(await draw()).metadata();
      sizes.push(`${meta.width}x${meta.height}`);
      return '';
    },
  } as unknown as Recognizer;
  const langs = await languages(t);
  await readPdf({ data, languages: [] }, { dpi: 300, maxPages: 1 }, langs, pdf, recognizer, live);
  await readPdf({ data, languages: [] }, { dpi: 100, maxPages: 1 }, langs, pdf, recognizer, live);
  t.same(sizes, ['1500x300', '500x100']);
});
