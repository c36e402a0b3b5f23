import { Type } from '@sinclair/typebox';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { defineVendor, VendorFailure } from '../../../core/define.js';
import type { PdfRenderInput } from '../../../core/capabilities/pdf.js';

/**
 * A stand-in for the chromium engine: "renders" by writing the HTML's text into a PDF (one
 * page per `page-break-before`), after fetching each `<img src>` through `fetchResource` as a
 * browser would; each image's fate is written on the page (`[img 200]`, `[img refused]`), and `[js]`
 * when the area asked for scripts to run.
 */
async function render(input: PdfRenderInput) {
  let html = input.html;
  if (input.url !== undefined) {
    let res;
    try {
      res = await input.fetchResource(input.url, { method: 'GET', headers: {} });
    } catch (e) {
      throw new VendorFailure('client_error', `The page cannot be loaded: ${(e as Error).message}`);
    }
    html = res.body.toString('utf8');
  }
  const notes: string[] = input.javascript ? ['[js]'] : [];
  for (const m of html!.matchAll(/<img[^>]*src="([^"]+)"/g)) {
    try {
      notes.push(`[img ${(await input.fetchResource(m[1], { method: 'GET', headers: {} })).status}]`);
    } catch {
      notes.push('[img refused]');
    }
  }
  const chunks = html!.split(/page-break-before/);
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const size: [number, number] =
    input.format === 'Letter' ? [612, 792] : input.format === 'Legal' ? [612, 1008] : [595, 842];
  if (input.orientation === 'landscape') size.reverse();
  for (const [i, chunk] of chunks.entries()) {
    // The split cuts a tag in two: its halves at the chunk's ends go with the tags.
    const text = chunk.replace(/^[^<]*?>|<[^>]*$/g, ' ').replace(/<[^>]*>/g, ' ');
    const line = `${text.replace(/\s+/g, ' ').trim()} ${i === 0 ? notes.join(' ') : ''}`.trim() || '-';
    doc.addPage(size).drawText(line.replace(/[^\x20-\x7e]/g, '?'), { x: 20, y: size[1] - 40, size: 10, font });
  }
  return { data: Buffer.from(await doc.save()), pages: doc.getPageCount() };
}

export default defineVendor({
  name: 'stand-in-render',
  regions: ['global'],
  configSchema: Type.Object({}, { additionalProperties: false, default: {} }),
  create() {
    return {
      capabilities: {
        'pdf.render': {
          invoke: (input: PdfRenderInput) => render(input),
        },
      },
    };
  },
});
