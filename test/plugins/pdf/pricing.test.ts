import t from 'tap';
import { Value } from '@sinclair/typebox/value';
import { PdfConfig } from '../../../plugins/pdf/config.js';
import { pdfPrice, pdfPrices } from '../../../plugins/pdf/pricing.js';

// The PDF area's own prices, which the router asks for every call whichever engine serves it
// (the engines have no price() of their own): flat, or base plus pages capped by the reservation.

const cfg = (over: Record<string, unknown>) => Value.Default(PdfConfig, { ...over }) as any;

t.test('flat: the same before and after the call', async (t) => {
  const merge = pdfPrice(pdfPrices(cfg({ merge_price_usd: 0.001 }), 'pdf.merge'), 'pdf.merge');
  t.equal(merge({}), 1000);
  t.equal(merge({}, { data: Buffer.alloc(0), pages: 3 }), 1000);
});

t.test('base plus pages: the reservation covers reserve_pages; the settled price is capped by it', async (t) => {
  const c = cfg({ merge_price_usd: 0.0002, merge_page_price_usd: 0.0001, reserve_pages: 48 });
  const merge = pdfPrice(pdfPrices(c, 'pdf.merge'), 'pdf.merge');
  t.equal(merge({}), 5000, 'estimate: 200 + 48 × 100');
  t.equal(merge({}, { data: Buffer.alloc(0), pages: 3 }), 500);
  t.equal(merge({}, { data: Buffer.alloc(0), pages: 99 }), 5000, 'capped');
});

t.test("per page of each capability's output: a split's parts together, OCR's pages read", async (t) => {
  const c = cfg({ split_price_usd: 0, split_page_price_usd: 0.00001, ocr_price_usd: 0, ocr_page_price_usd: 0.001 });
  const split = pdfPrice(pdfPrices(c, 'pdf.split'), 'pdf.split');
  const parts = [2, 3].map((pages) => ({ data: Buffer.alloc(0), pages }));
  t.equal(split({}, { parts }), 50);
  const ocr = pdfPrice(pdfPrices(c, 'pdf.ocr'), 'pdf.ocr');
  const pages = [1, 2, 3].map(() => ({ text: '', source: 'ocr' as const }));
  t.equal(ocr({}, { text: '', pages }), 3000);
  t.equal(ocr({}), 200_000, 'the default reserve_pages (200) before the call');
});
