// long-pole: one of the longest files; started first so it does not run alone at the end (scripts/test-files.mjs).
import t from 'tap';
import sharp from 'sharp';
import { PDFDocument } from 'pdf-lib';
import { builtinVendors } from '../../../vendors/builtin.js';
import { makePdf } from '../../fakes/test-pdfs.js';
import { pdfApp, serveFiles } from './setup.js';

// database-independent: text layer and tesseract; the area keeps nothing in the database.

// ocr on the real embedded `tesseract` engine. Until that engine is merged into this branch
// these tests are skipped, saying why; the plumbing is tested with a stand-in in plumbing.test.ts.
const missing = builtinVendors.some((v) => v.name === 'tesseract') ? false : 'the tesseract engine is not built in yet';

/** A "scan": a page that is only a picture of text (no text layer), as a scanner makes. */
async function scannedPdf(words: string): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="1240" height="400"><rect width="100%" height="100%" fill="white"/>
    <text x="60" y="220" font-family="DejaVu Sans" font-size="96" fill="black">${words}</text></svg>`;
  const png = await sharp(Buffer.from(svg)).png().toBuffer();
  const doc = await PDFDocument.create();
  const image = await doc.embedPng(png);
  doc.addPage([595, 192]).drawImage(image, { x: 0, y: 0, width: 595, height: 192 });
  return Buffer.from(await doc.save());
}

t.test('a text-layer PDF: the text of each page, in order, from the text layer', { skip: missing }, async (t) => {
  const { post, balance, results } = await pdfApp(t);
  const url = await serveFiles(t, { doc: await makePdf(3) });
  const before = await balance();
  const res = await post('/v1/pdf/ocr', { url: url('doc'), language: 'en' });
  t.equal(res.statusCode, 200, res.body);
  const body = res.json();
  t.same(
    body.pages.map((p: any) => p.text.trim()),
    ['Page 1', 'Page 2', 'Page 3']
  );
  t.match(body.pages[0], { source: 'text_layer' });
  t.match(body.text, /Page 1[\s\S]*Page 3/);
  t.equal(before - (await balance()), 3 * 2000);
  t.equal(await results(), 0);
});

t.test('a scanned page: recognised by tesseract', { skip: missing }, async (t) => {
  const { post } = await pdfApp(t);
  const url = await serveFiles(t, { scan: await scannedPdf('Hello Gateway') });
  const res = await post('/v1/pdf/ocr', { url: url('scan'), language: 'eng' });
  t.equal(res.statusCode, 200, res.body);
  t.match(res.json().pages[0], { source: 'ocr', text: /Hello\s+Gateway/i });
});
