import { setMaxListeners } from 'node:events';
import { type PdfOcrInput, type PdfOcrOutput, VendorFailure } from '../../core/kit/vendor.js';
import { tidy } from './pdf-document.js';
import type { PdfFile, PdfWorkers } from './pdf-workers.js';
import type { LanguageData } from './languages.js';
import type { Recognizer } from './recognizer.js';
import { refused } from './refused.js';

/**
 * A text layer with fewer letters or digits than this is a scan's (a stray page number, a
 * scanner's stamp): the page is recognised instead, which finds those few characters anyway.
 */
export const MIN_TEXT_LAYER_CHARS = 3;

/** Pages are joined with a form feed, as pdftotext does: `text.split('\f')` gives the pages back. */
export const PAGE_SEPARATOR = '\f';

export interface OcrSettings {
  dpi: number;
  maxPages: number;
}

export type PageText = PdfOcrOutput['pages'][number];

/**
 * Each page's text layer first (cheap, exact); the pages without one are rasterised and
 * recognised, all of a document's scans queued at once so `concurrency` workers share them,
 * each page's text landing at its own index. The first page to fail stops the others. pdfjs's
 * work (opening, text, drawing) runs in `pdf`'s worker threads, Tesseract's in `recognizer`'s.
 */
export async function readPdf(
  input: PdfOcrInput,
  settings: OcrSettings,
  languages: LanguageData,
  pdf: PdfWorkers,
  recognizer: Recognizer,
  signal: AbortSignal
): Promise<PdfOcrOutput> {
  const codes = input.languages.length ? [...new Set(input.languages)] : ['eng'];
  // An unknown language is refused before the document is read.
  const langPath = await languages.prepare(codes);
  const doc = await pdf.open(input.data, signal);
  // One page failing stops the others, as the caller going away does (gone already, too).
  const stop = new AbortController();
  const any = AbortSignal.any([signal, stop.signal]);
  // Every scanned page waits on it (its queue entry, its recognition): Node's leak warning is for
  // listeners without bound, and these are bounded by the page cap.
  setMaxListeners(2 * settings.maxPages + 10, any);
  try {
    any.throwIfAborted();
    if (doc.pages > settings.maxPages) {
      throw refused(`The PDF has ${doc.pages} pages; OCR reads at most ${settings.maxPages} (max_pages).`, 413);
    }
    const work: Promise<PageText>[] = [];
    for (let n = 1; n <= doc.pages; n++) {
      const page = readPage(doc, n, settings.dpi, codes.join('+'), langPath, recognizer, any);
      page.catch((e) => stop.abort(e));
      work.push(page);
    }
    const pages = await Promise.all(work);
    return { text: pages.map((p) => p.text).join(PAGE_SEPARATOR), pages };
  } finally {
    stop.abort();
    await doc.close();
  }
}

async function readPage(
  doc: PdfFile,
  n: number,
  dpi: number,
  languages: string,
  langPath: string,
  recognizer: Recognizer,
  signal: AbortSignal
): Promise<PageText> {
  signal.throwIfAborted();
  const layer = tidy(await doc.text(n, signal).catch((e) => Promise.reject(pageFailure(n, e, signal))));
  if (layer.replace(/[^\p{L}\p{N}]/gu, '').length >= MIN_TEXT_LAYER_CHARS) return { text: layer, source: 'text_layer' };
  const draw = () => doc.render(n, dpi, signal).catch((e) => Promise.reject(pageFailure(n, e, signal)));
  const text = await recognizer.recognize(draw, languages, langPath, signal);
  return { text: tidy(text), source: 'ocr' };
}

/**
 * pdfjs failing on one page is that page's broken content: the caller's document. An abort
 * and the gateway's own bug (a TypeError…) stay what they are.
 */
function pageFailure(n: number, e: unknown, signal: AbortSignal): unknown {
  if (signal.aborted || e instanceof VendorFailure) return e;
  if (e instanceof TypeError || e instanceof RangeError || e instanceof ReferenceError) return e;
  return refused(`Page ${n} of the PDF cannot be read: ${String((e as Error)?.message ?? e).split('\n')[0]}`);
}
