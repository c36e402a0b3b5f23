import type { PDFDocument } from 'pdf-lib';
import type { PdfMergeInput, PdfOutput, PdfSplitInput, PdfSplitOutput, PageRange } from '../../core/kit/vendor.js';
import { type EditCaps, checkBytesOut, checkPagesIn, checkPagesOut } from './caps.js';
import { loadPdf, pdfLib, refused, saved } from './load.js';

async function copied(target: PDFDocument, source: PDFDocument, indices: number[]): Promise<void> {
  for (const page of await target.copyPages(source, indices)) target.addPage(page);
}

/** The documents one after the other, every page of each, in order. */
export async function mergePdfs(input: PdfMergeInput, caps: EditCaps): Promise<PdfOutput> {
  const { PDFDocument } = await pdfLib();
  if (!input.documents.length) throw refused('There is no document to merge.');
  // Every document parsed and counted before a page is copied: a cap crossed refuses the call
  // before the work that costs (copying and writing) begins.
  const docs: PDFDocument[] = [];
  for (const [i, data] of input.documents.entries()) {
    const doc = await loadPdf(data, `Document ${i + 1}`);
    checkPagesIn(`Document ${i + 1}`, doc.getPageCount(), caps);
    docs.push(doc);
  }
  checkPagesOut(
    docs.reduce((n, d) => n + d.getPageCount(), 0),
    caps
  );
  const out = await PDFDocument.create();
  for (const doc of docs) await copied(out, doc, doc.getPageIndices());
  const result = await saved(out);
  checkBytesOut(result.data.length, caps);
  return result;
}

function label(r: PageRange): string {
  return r.to === undefined ? `${r.from}-` : r.from === r.to ? `${r.from}` : `${r.from}-${r.to}`;
}

/**
 * One document a range. Ranges are checked against the page count here, where the document is
 * parsed: the area checks their syntax, only the engine knows how many pages there are.
 */
export async function splitPdf(input: PdfSplitInput, caps: EditCaps): Promise<PdfSplitOutput> {
  const { PDFDocument } = await pdfLib();
  const doc = await loadPdf(input.data, 'The document');
  const count = doc.getPageCount();
  checkPagesIn('The document', count, caps);
  for (const r of input.ranges) {
    const to = r.to ?? count;
    if (r.from < 1 || r.from > count || to > count || to < r.from)
      throw refused(`Page range ${label(r)} is outside the document's ${count} page${count === 1 ? '' : 's'}.`);
  }
  checkPagesOut(
    input.ranges.reduce((n, r) => n + (r.to ?? count) - r.from + 1, 0),
    caps
  );
  const parts = [];
  let bytes = 0;
  for (const r of input.ranges) {
    const part = await PDFDocument.create();
    const to = r.to ?? count;
    await copied(
      part,
      doc,
      Array.from({ length: to - r.from + 1 }, (_, k) => r.from - 1 + k)
    );
    const written = await saved(part);
    bytes += written.data.length;
    checkBytesOut(bytes, caps);
    parts.push(written);
  }
  return { parts };
}
