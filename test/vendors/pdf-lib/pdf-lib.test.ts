import t from 'tap';
import { PDFDocument } from 'pdf-lib';
import pdfLibVendor from '../../../vendors/pdf-lib/index.js';
import { origin } from '../../../vendors/pdf-lib/watermark.js';
import { VendorFailure } from '../../../core/define.js';
import type { PdfOutput, PdfSplitOutput, PdfWatermarkInput } from '../../../core/capabilities/pdf.js';
import { vendorContext } from '../../helpers/vendor-context.js';
import { encryptedPdf, makePdf, pageCount, pageTexts, solidPng } from '../../fakes/test-pdfs.js';

async function engine() {
  const inst = await pdfLibVendor.create({ concurrency: 2 }, vendorContext('pdf-lib'));
  const opts = { signal: new AbortController().signal, deadline: Date.now() + 60_000 };
  const caps = inst.capabilities;
  return {
    inst,
    merge: (documents: Buffer[]) => caps['pdf.merge'].invoke({ documents }, opts) as Promise<PdfOutput>,
    split: (data: Buffer, ranges: { from: number; to?: number }[]) =>
      caps['pdf.split'].invoke({ data, ranges }, opts) as Promise<PdfSplitOutput>,
    watermark: (data: Buffer, w: Partial<PdfWatermarkInput>) =>
      caps['pdf.watermark'].invoke(
        { data, opacity: 0.3, position: 'center', rotation: 45, ...w },
        opts
      ) as Promise<PdfOutput>,
  };
}

/** A refusal the router turns into 422 unprocessable (413 for the size cap), with its message. */
function isRefusal(t: Tap, e: unknown, message: RegExp, status = 422) {
  t.ok(e instanceof VendorFailure, 'a VendorFailure');
  t.equal((e as VendorFailure).kind, 'client_error');
  t.equal((e as VendorFailure).status, status);
  t.match((e as Error).message, message);
}
type Tap = typeof t;

t.test('merge: pages of every document, in order', async (t) => {
  const e = await engine();
  const out = await e.merge([await makePdf(2), await makePdf(3)]);
  t.equal(out.pages, 5);
  t.equal(await pageCount(out.data), 5);
  const texts = await pageTexts(out.data);
  t.same(texts, ['Page 1', 'Page 2', 'Page 1', 'Page 2', 'Page 3']);
});

t.test('split: one document a range; open ranges run to the last page', async (t) => {
  const e = await engine();
  const out = await e.split(await makePdf(6), [{ from: 1, to: 3 }, { from: 5 }, { from: 4, to: 4 }]);
  t.same(
    out.parts.map((p) => p.pages),
    [3, 2, 1]
  );
  t.same(await pageTexts(out.parts[1].data), ['Page 5', 'Page 6']);
  t.same(await pageTexts(out.parts[2].data), ['Page 4']);
});

t.test("split: a range beyond the page count is the caller's 422, naming the range and the count", async (t) => {
  const e = await engine();
  const doc = await makePdf(3);
  for (const ranges of [[{ from: 2, to: 4 }], [{ from: 4 }], [{ from: 3, to: 2 }]]) {
    const err = await e.split(doc, ranges).catch((x) => x);
    isRefusal(t, err, /outside the document's 3 pages/);
  }
});

t.test('watermark text: on every page, readable back, diagonal and centred by default geometry', async (t) => {
  const e = await engine();
  const out = await e.watermark(await makePdf(3), { text: 'CONFIDENTIAL' });
  t.equal(out.pages, 3);
  const texts = await pageTexts(out.data);
  for (const text of texts) t.match(text, /CONFIDENTIAL/);
  // The mark's bounding box is centred on the page.
  const page = { x: 0, y: 0, width: 600, height: 800 };
  const at = origin(page, 200, 20, 45, 'center');
  const c = Math.SQRT1_2;
  const centre = { x: at.x + (200 * c - 20 * c) / 2, y: at.y + (200 * c + 20 * c) / 2 };
  t.ok(Math.abs(centre.x - 300) < 1e-6 && Math.abs(centre.y - 400) < 1e-6, 'centred');
  const corner = origin(page, 100, 20, 0, 'bottom_right');
  t.ok(corner.x + 100 < 600 && corner.x + 100 > 560 && corner.y > 0 && corner.y < 40, 'bottom right, inside');
});

t.test('watermark opacity is written to the page (an ExtGState with the alpha)', async (t) => {
  const e = await engine();
  const out = await e.watermark(await makePdf(1), { text: 'DRAFT', opacity: 0.25 });
  const doc = await PDFDocument.load(out.data);
  const raw = Buffer.from(await doc.save({ useObjectStreams: false })).toString('latin1');
  t.match(raw, /\/ca 0\.25/);
});

t.test('watermark image: PNG and JPEG drawn on every page; anything else refused', async (t) => {
  const e = await engine();
  const png = await solidPng();
  const out = await e.watermark(await makePdf(2), { image: png, rotation: 0 });
  t.equal(out.pages, 2);
  const doc = await PDFDocument.load(out.data);
  const raw = Buffer.from(await doc.save({ useObjectStreams: false })).toString('latin1');
  t.match(raw, /\/Subtype \/Image/);
  const sharp = (await import('sharp')).default;
  const jpeg = await sharp(png).flatten().jpeg().toBuffer();
  t.equal((await e.watermark(await makePdf(1), { image: jpeg })).pages, 1);
  isRefusal(
    t,
    await e.watermark(await makePdf(1), { image: Buffer.from('GIF89a...') }).catch((x) => x),
    /PNG nor JPEG/
  );
});

t.test('watermark text outside WinAnsi is refused with a reason, not a 500', async (t) => {
  const e = await engine();
  const err = await e.watermark(await makePdf(1), { text: '機密' }).catch((x) => x);
  isRefusal(t, err, /Latin-1/);
});

t.test('encrypted, corrupt and non-PDF input: 422 with a clear message on every capability', async (t) => {
  const e = await engine();
  const enc = await encryptedPdf();
  const good = await makePdf(1);
  isRefusal(t, await e.merge([good, enc]).catch((x) => x), /Document 2 is encrypted/);
  isRefusal(t, await e.split(enc, [{ from: 1 }]).catch((x) => x), /encrypted/);
  isRefusal(t, await e.watermark(enc, { text: 'x' }).catch((x) => x), /encrypted/);
  isRefusal(t, await e.split(Buffer.from('hello, not a pdf'), [{ from: 1 }]).catch((x) => x), /not a PDF/);
  const truncated = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.from('1 0 obj << /Type /Catalog')]);
  isRefusal(t, await e.watermark(truncated, { text: 'x' }).catch((x) => x), /not a readable PDF|no pages/);
});

t.test(
  'no price() of its own (the PDF area prices every call: test/plugins/pdf/pricing.test.ts); healthy',
  async (t) => {
    const e = await engine();
    for (const cap of ['pdf.merge', 'pdf.split', 'pdf.watermark'] as const)
      t.equal((e.inst.capabilities[cap] as { price?: unknown }).price, undefined, cap);
    t.same(await e.inst.health!(), { ok: true });
  }
);
