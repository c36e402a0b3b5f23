import { PDFDocument, PDFHexString, StandardFonts } from 'pdf-lib';
import sharp from 'sharp';

/** A PDF of `pages` pages (A4 unless `size`), each saying "Page N" so a split part can be told apart. */
export async function makePdf(pages: number, size: [number, number] = [595, 842]): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= pages; i++) doc.addPage(size).drawText(`Page ${i}`, { x: 50, y: size[1] - 80, size: 24, font });
  return Buffer.from(await doc.save());
}

/**
 * A PDF whose trailer names an /Encrypt dictionary, as a password-protected file's does (pdf-lib
 * cannot encrypt; readers and pdf-lib go by the trailer entry).
 */
export async function encryptedPdf(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  doc.addPage();
  const encrypt = doc.context.obj({
    Filter: 'Standard',
    V: 1,
    R: 2,
    O: PDFHexString.of('00'.repeat(32)),
    U: PDFHexString.of('00'.repeat(32)),
    P: -4,
  });
  doc.context.trailerInfo.Encrypt = doc.context.register(encrypt);
  doc.context.trailerInfo.ID = doc.context.obj([PDFHexString.of('01'.repeat(16)), PDFHexString.of('01'.repeat(16))]);
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}

/** Page count, read back with pdf-lib. */
export async function pageCount(data: Buffer | Uint8Array): Promise<number> {
  return (await PDFDocument.load(data)).getPageCount();
}

/** Each page's text, read with pdfjs-dist (the text a reader shows, watermark included). */
export async function pageTexts(data: Buffer | Uint8Array): Promise<string[]> {
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  const doc = await pdfjs.getDocument({ data: new Uint8Array(data), useSystemFonts: false, verbosity: 0 }).promise;
  try {
    const out: string[] = [];
    for (let i = 1; i <= doc.numPages; i++) {
      const content = await (await doc.getPage(i)).getTextContent();
      out.push(content.items.map((it: any) => it.str ?? '').join(' '));
    }
    return out;
  } finally {
    await doc.destroy();
  }
}

/** A `w` x `h` solid PNG, for image watermarks. */
export function solidPng(w = 40, h = 20): Promise<Buffer> {
  return sharp({ create: { width: w, height: h, channels: 4, background: { r: 200, g: 0, b: 0, alpha: 1 } } })
    .png()
    .toBuffer();
}
