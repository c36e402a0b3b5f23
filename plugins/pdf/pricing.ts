import {
  usdToMicros,
  type AreaPrice,
  type PdfOcrOutput,
  type PdfOutput,
  type PdfSplitOutput,
} from '../../core/kit/area.js';
import type { PdfConfigT } from './config.js';

// The PDF area prices every call itself, whichever engine serves it (the router asks it): a
// flat price, or a base plus a page price whose reservation covers `reserve_pages`.

export const PRICE_KEYS = {
  'pdf.render': 'generate',
  'pdf.merge': 'merge',
  'pdf.split': 'split',
  'pdf.watermark': 'watermark',
  'pdf.ocr': 'ocr',
} as const;
export type PdfCap = keyof typeof PRICE_KEYS;

/** One capability's prices, in micro-USD before the markup. */
export interface PdfPrices {
  /** The most a call costs: what is reserved before it. */
  max: number;
  /** Per call whatever its pages (a per-document fee); the whole price when there is no page price. */
  base: number;
  /** Per page of the result (of the document read, for OCR); 0: the call is flat. */
  page: number;
}

export function pdfPrices(cfg: PdfConfigT, cap: PdfCap): PdfPrices {
  const key = PRICE_KEYS[cap];
  const base = usdToMicros(cfg[`${key}_price_usd`]);
  const page = usdToMicros(cfg[`${key}_page_price_usd`]);
  return { max: page ? base + page * cfg.reserve_pages : base, base, page };
}

/** The pages a call's output is priced by. */
const PAGES: Record<PdfCap, (out: any) => number> = {
  'pdf.render': (o: PdfOutput) => o.pages,
  'pdf.merge': (o: PdfOutput) => o.pages,
  'pdf.watermark': (o: PdfOutput) => o.pages,
  'pdf.split': (o: PdfSplitOutput) => o.parts.reduce((n, p) => n + p.pages, 0),
  'pdf.ocr': (o: PdfOcrOutput) => o.pages.length,
};

/** The router's price for a capability: the most before the call; base plus per page after it, never above that. */
export function pdfPrice(p: PdfPrices, cap: PdfCap): AreaPrice<unknown, unknown> {
  if (!p.page) return () => p.base;
  const pages = PAGES[cap];
  return (_input, output) => (output === undefined ? p.max : Math.min(p.max, p.base + p.page * pages(output)));
}
