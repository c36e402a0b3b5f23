import type { PDFDocument } from 'pdf-lib';
import type {
  PdfMergeInput,
  PdfOutput,
  PdfSplitInput,
  PdfSplitOutput,
  PageRange,
} from '../../core/capabilities/pdf.js';
import { loadPdf, pdfLib, refused, saved } from './load.js';

async function copied(target: PDFDocument, source: PDFDocument, indices: number[]): Promise<void> {
  for (const page of await target.copyPages(source, indices)) target.addPage(page);
}

/** The documents one after the other, every page of each, in order. */
export async function mergePdfs(input: PdfMergeInput): Promise<PdfOutput> {
  const { PDFDocument } = await pdfLib();
  if (!input.documents.length) throw refused('There is no document to merge.');
  const out = await PDFDocument.create();
  for (const [i, data] of input.documents.entries()) {
    const doc = await loadPdf(data, `Document ${i + 1}`);
    await copied(out, doc, doc.getPageIndices());
  }
  return saved(out);
}

function label(r: PageRange): string {
  return r.to === undefined ? `${r.from}-` : r.from === r.to ? `${r.from}` : `${r.from}-${r.to}`;
}

/**
 * One document a range. Ranges are checked against the page count here, where the document is
 * parsed: the area checks their syntax, only the engine knows how many pages there are.
 */
export async function splitPdf(input: PdfSplitInput): Promise<PdfSplitOutput> {
  const { PDFDocument } = await pdfLib();
  const doc = await loadPdf(input.data, 'The document');
  const count = doc.getPageCount();
  for (const r of input.ranges) {
    const to = r.to ?? count;
    if (r.from < 1 || r.from > count || to > count || to < r.from)
      throw refused(`Page range ${label(r)} is outside the document's ${count} page${count === 1 ? '' : 's'}.`);
  }
  const parts = [];
  for (const r of input.ranges) {
    const part = await PDFDocument.create();
    const to = r.to ?? count;
    await copied(
      part,
      doc,
      Array.from({ length: to - r.from + 1 }, (_, k) => r.from - 1 + k)
    );
    parts.push(await saved(part));
  }
  return { parts };
}
