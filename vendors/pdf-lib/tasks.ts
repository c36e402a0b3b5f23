import { mergePdfs, splitPdf } from './edit.js';
import type { EditCaps } from './caps.js';
import { watermarkPdf } from './watermark.js';
import type { PdfMergeInput, PdfSplitInput, PdfWatermarkInput } from '../../core/kit/vendor.js';

// What the pdf-lib engine runs in its worker threads (core/isolation/worker-pool.ts): every parse
// and write of a caller's document, so none of it holds the gateway's event loop, and a document
// that takes too long is ended with its thread. Loaded by path in the thread, never imported by
// the engine itself (only its types).

export const tasks = {
  merge: (i: { input: PdfMergeInput; caps: EditCaps }) => mergePdfs(i.input, i.caps),
  split: (i: { input: PdfSplitInput; caps: EditCaps }) => splitPdf(i.input, i.caps),
  watermark: (i: { input: PdfWatermarkInput; caps: EditCaps }) => watermarkPdf(i.input, i.caps),
};
