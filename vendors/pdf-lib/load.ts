import type { PDFDocument } from 'pdf-lib';
import { VendorFailure, PDF_MAX_INPUT_BYTES } from '../../core/kit/vendor.js';

export type PdfLib = typeof import('pdf-lib');

// pdf-lib (~1 MB of JavaScript) is loaded on the first PDF edit, not at boot.
let lib: Promise<PdfLib> | undefined;
export function pdfLib(): Promise<PdfLib> {
  lib ??= import('pdf-lib');
  return lib;
}

/** The caller's document is wrong (413 over the cap, else 422): no other engine would do better. */
export function refused(message: string, status: 413 | 422 = 422): VendorFailure {
  return new VendorFailure('client_error', message, { status });
}

/**
 * A caller's PDF, parsed: an encrypted one is refused (pdf-lib would copy its encrypted
 * streams as they are and write a document no reader opens), a corrupt one named as such.
 */
export async function loadPdf(data: Buffer, what: string): Promise<PDFDocument> {
  const { PDFDocument } = await pdfLib();
  if (data.length > PDF_MAX_INPUT_BYTES)
    throw refused(`${what} is ${data.length} bytes, over the cap of ${PDF_MAX_INPUT_BYTES} bytes.`, 413);
  // pdf-lib finds a header anywhere in the first bytes and parses garbage into an empty
  // document; a file that does not start like a PDF is not one.
  if (!data.subarray(0, 1024).includes('%PDF-')) throw refused(`${what} is not a PDF (no %PDF- header).`);
  let doc: PDFDocument;
  try {
    doc = await PDFDocument.load(data, { updateMetadata: false, throwOnInvalidObject: false });
    // Counting walks the page tree: a file with a header and no catalog, or a tree whose kids
    // lead back to an ancestor, fails here, on the caller's document, not later as our fault.
    if (doc.getPageCount() === 0) throw refused(`${what} has no pages.`);
  } catch (e) {
    if (e instanceof VendorFailure) throw e;
    // pdf-lib's errors are compiled to ES5 (instanceof does not hold): its message tells.
    const message = String((e as Error)?.message ?? e);
    if (/is encrypted/.test(message))
      throw refused(`${what} is encrypted (password protected); send a PDF without encryption.`);
    if (e instanceof RangeError) throw refused(`${what} is not a readable PDF: its page tree is circular or too deep.`);
    throw refused(`${what} is not a readable PDF: ${message.split('\n')[0]}`);
  }
  return doc;
}

export async function saved(doc: PDFDocument): Promise<{ data: Buffer; pages: number }> {
  return { data: Buffer.from(await doc.save()), pages: doc.getPageCount() };
}
