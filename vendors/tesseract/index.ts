import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { defineVendor, type PDF_CAPABILITIES, type PdfOcrInput, type ImplOf } from '../../core/kit/vendor.js';
import { LanguageData, traineddata } from './languages.js';
import { readPdf } from './ocr.js';
import { librariesInstalled } from './pdf-document.js';
import { PdfWorkers } from './pdf-workers.js';
import { Recognizer } from './recognizer.js';

type Caps = typeof PDF_CAPABILITIES;

/**
 * The embedded OCR engine: a PDF's text layer read with pdfjs-dist, and the pages without one
 * rasterised and recognised by Tesseract (tesseract.js, its wasm build in worker threads) in
 * the gateway's own process, with language data from `@tesseract.js-data/<code>` npm packages:
 * nothing is downloaded. Priced by the PDF area, per page read.
 */
export default defineVendor({
  name: 'tesseract',
  embedded: true,
  regions: ['global'],
  configSchema: Type.Object(
    {
      concurrency: Type.Integer({
        minimum: 1,
        maximum: 64,
        default: 1,
        description:
          'Pages recognised at once, one Tesseract worker thread (~100 MB) each; as many pdfjs threads '
          + '(~60 MB each) open, read and draw the PDFs.',
      }),
      dpi: Type.Integer({
        minimum: 72,
        maximum: 600,
        default: 300,
        description: 'Resolution scanned pages are rasterised at for recognition; Tesseract reads best at 300.',
      }),
      max_pages: Type.Integer({
        minimum: 1,
        default: 50,
        description: 'Most pages a PDF sent to OCR may have; more is refused (413).',
      }),
    },
    { additionalProperties: false, default: {} }
  ),
  create(config, ctx) {
    const recognizer = new Recognizer(config.concurrency, ctx.log);
    const pdf = new PdfWorkers(config.concurrency, ctx.log);
    const languages = new LanguageData(join(ctx.dataDir, 'tesseract', 'lang'));
    const settings = { dpi: config.dpi, maxPages: config.max_pages };
    const ocr: ImplOf<Caps['pdf.ocr']> = {
      invoke: (input: PdfOcrInput, { signal }) => readPdf(input, settings, languages, pdf, recognizer, signal),
    };
    return {
      capabilities: { 'pdf.ocr': ocr },
      // Healthy when the libraries and English data are installed: found, not loaded (pdfjs alone
      // takes over a second to load, and `doctor` gives a check 500 ms); nothing is written.
      async health() {
        try {
          librariesInstalled();
          await traineddata('eng');
          return { ok: true };
        } catch (e) {
          return { ok: false, error: (e as Error).message };
        }
      },
      // Pages under way finish (and draw) first, then the PDF threads end.
      close: async () => {
        await recognizer.close();
        await pdf.close();
      },
    };
  },
});
