import { PDFDocument, PDFHexString, PDFName, StandardFonts } from 'pdf-lib';
import sharp from 'sharp';

// PDFs made in the test for the OCR engine: pages with a text layer, and "scans" (a page whose
// only content is a picture of text), small so recognising one stays cheap.

/** A page with a text layer (`text`), or a scan of `scan`'s words. */
export type PageSpec = { text: string } | { scan: string };

/** `words` drawn black on white, large, as a PNG: what a scanner would make of a printed line. */
export function scanPng(words: string): Promise<Buffer> {
  const svg =
    '<svg xmlns="http://www.w3.org/2000/svg" width="1500" height="300">'
    + '<rect width="100%" height="100%" fill="white"/>'
    + `<text x="60" y="190" font-family="DejaVu Sans" font-size="110" fill="black">${words}</text></svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

/** A PDF of `pages` in order; a scan's page is 5 x 1 inches, its picture filling it (300 dpi). */
export async function pdfOf(pages: PageSpec[]): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const spec of pages) {
    if ('text' in spec) {
      const page = doc.addPage([360, 144]);
      const lines = spec.text.split('\n');
      for (const [i, line] of lines.entries()) page.drawText(line, { x: 20, y: 110 - i * 20, size: 14, font });
    } else {
      const page = doc.addPage([360, 72]);
      const image = await doc.embedPng(await scanPng(spec.scan));
      page.drawImage(image, { x: 0, y: 0, width: 360, height: 72 });
    }
  }
  return Buffer.from(await doc.save());
}

/**
 * A PDF that declares the standard security handler with a user password the empty one does
 * not match: what a reader asks a password for. (pdf-lib cannot encrypt; the dictionary is enough.)
 */
export async function passwordPdf(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  doc.addPage([200, 200]);
  const ctx = doc.context;
  const bytes = (b: number) => PDFHexString.of(Buffer.alloc(32, b).toString('hex'));
  const encrypt = ctx.obj({ Filter: 'Standard', V: 1, R: 2, Length: 40, P: -44 });
  encrypt.set(PDFName.of('O'), bytes(1));
  encrypt.set(PDFName.of('U'), bytes(2));
  ctx.trailerInfo.Encrypt = ctx.register(encrypt);
  ctx.trailerInfo.ID = ctx.obj([bytes(3), bytes(3)]);
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}

/**
 * A scanned A4 letter: one page whose only content is a 300-dpi JPEG of lines of text (what an
 * office scanner makes, ~0.8 MB). pdfjs decodes such a picture in one synchronous call.
 */
export async function scannedA4(): Promise<Buffer> {
  const [width, height] = [2480, 3508];
  const lines = Array.from(
    { length: 60 },
    (_, i) =>
      `<text x="150" y="${200 + i * 55}" font-size="40" font-family="DejaVu Sans">`
      + `Line ${i + 1} of a scanned letter: the quick brown fox jumps over the lazy dog</text>`
  );
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">`
    + `<rect width="100%" height="100%" fill="white"/>${lines.join('')}</svg>`;
  const jpeg = await sharp(Buffer.from(svg)).jpeg({ quality: 80 }).toBuffer();
  const doc = await PDFDocument.create();
  doc.addPage([595, 842]).drawImage(await doc.embedJpg(jpeg), { x: 0, y: 0, width: 595, height: 842 });
  return Buffer.from(await doc.save());
}
