import { Type } from '@sinclair/typebox';
import { PDFDocument } from 'pdf-lib';
import { defineVendor, VendorFailure } from '../../../core/define.js';
import type { PdfOcrInput, PdfOcrOutput } from '../../../core/capabilities/pdf.js';

/** A stand-in for the tesseract engine: one page of text a page, naming the languages it was asked for. */
async function ocr(input: PdfOcrInput): Promise<PdfOcrOutput> {
  let doc: PDFDocument;
  try {
    doc = await PDFDocument.load(input.data);
  } catch (e) {
    throw new VendorFailure('client_error', `The document is not a readable PDF: ${(e as Error).message}`);
  }
  const pages = doc
    .getPages()
    .map((_p, i) => ({ text: `page ${i + 1} ${input.languages.join('+')}`, source: 'ocr' as const }));
  return { text: pages.map((p) => p.text).join('\n'), pages };
}

export default defineVendor({
  name: 'stand-in-ocr',
  regions: ['global'],
  configSchema: Type.Object({}, { additionalProperties: false, default: {} }),
  create() {
    return {
      capabilities: {
        'pdf.ocr': {
          invoke: (input: PdfOcrInput) => ocr(input),
        },
      },
    };
  },
});
