import { LOWER_PRIORITY_SOURCE } from '../../core/kit/vendor.js';
import { MAX_RASTER_PIXELS, MAX_RASTER_SIDE } from './pdf-document.js';

/**
 * The code of a PDF worker thread, run with `new Worker(PDF_WORKER_SOURCE, { eval: true })`:
 * inline JavaScript rather than a file next to this one, because the file would be `.ts` under
 * tsx (the tests) and `.js` in dist/, and a worker thread loads neither the same way (this is
 * local-storage's MD5 worker's reason too). `workerData` is a `PdfJsFiles`.
 *
 * pdfjs in Node has no worker of its own (it runs its "fake worker" in the calling thread), so
 * everything it does here (parsing, text extraction, image decoding, drawing) happens on this
 * thread, below the event loop's CPU priority (core/isolation/background-priority.ts). Requests
 * are `{ id, op, doc, ... }`; each is answered `{ id, value }` or `{ id, error: { type, name,
 * message, stack } }`: an error's class and name do not survive postMessage, and the engine tells
 * a password from a corrupt file by the name.
 */
export const PDF_WORKER_SOURCE = `
'use strict';
${LOWER_PRIORITY_SOURCE}
const { parentPort, workerData } = require('node:worker_threads');
const MAX_RASTER_PIXELS = ${MAX_RASTER_PIXELS};
const MAX_RASTER_SIDE = ${MAX_RASTER_SIDE};
/** doc id -> { task: pdfjs loading task, doc: its document once open } */
const docs = new Map();
let lib;

parentPort.on('message', async (m) => {
  let answer;
  let transfer = [];
  try {
    const [value, moved] = await run(m);
    answer = { id: m.id, value };
    transfer = moved;
  } catch (e) {
    answer = { id: m.id, error: described(e) };
  }
  try {
    parentPort.postMessage(answer, transfer);
  } catch (e) {
    parentPort.postMessage({ id: m.id, error: described(e) });
  }
});

async function run(m) {
  if (m.op === 'open') return [await open(m.doc, m.data), []];
  if (m.op === 'close') return [await close(m.doc), []];
  const doc = docs.get(m.doc)?.doc;
  if (!doc) throw new Error('The document is not open in this worker.');
  const page = await doc.getPage(m.page);
  try {
    if (m.op === 'text') return [await text(page), []];
    const png = await render(doc, page, m.dpi);
    return [png, [png.buffer]];
  } finally {
    page.cleanup();
  }
}

function pdfjs() {
  lib ??= import(workerData.module).catch((e) => {
    lib = undefined;
    throw Object.assign(e instanceof Error ? e : new Error(String(e)), { unavailable: true });
  });
  return lib;
}

async function open(id, data) {
  const pdf = await pdfjs();
  // The bytes were moved here, not copied: pdfjs may take (detach) them in turn.
  const task = pdf.getDocument({
    data: new Uint8Array(data),
    ...workerData.assets,
    cMapPacked: true,
    disableFontFace: true,
    useSystemFonts: false,
    verbosity: pdf.VerbosityLevel.ERRORS,
  });
  const entry = { task, doc: undefined };
  docs.set(id, entry);
  try {
    entry.doc = await task.promise;
    return entry.doc.numPages;
  } catch (e) {
    docs.delete(id);
    await task.destroy().catch(() => {});
    throw e;
  }
}

/** A close that arrives while the document opens destroys the loading task: its open fails. */
async function close(id) {
  const entry = docs.get(id);
  docs.delete(id);
  if (entry) await entry.task.destroy().catch(() => {});
  return null;
}

/** The page's text layer, lines as the PDF ends them; empty for a scan. */
async function text(page) {
  const content = await page.getTextContent();
  let out = '';
  for (const item of content.items) {
    if (!('str' in item)) continue;
    out += item.str;
    if (item.hasEOL) out += '\\n';
  }
  return out;
}

/** The page drawn at dpi (less for a huge page) as PNG, white behind, in an ArrayBuffer of its own. */
async function render(doc, page, dpi) {
  const base = page.getViewport({ scale: 1 });
  let scale = dpi / 72;
  const pixels = base.width * base.height * scale * scale;
  if (pixels > MAX_RASTER_PIXELS) scale *= Math.sqrt(MAX_RASTER_PIXELS / pixels);
  scale = Math.min(scale, MAX_RASTER_SIDE / Math.max(base.width, base.height));
  const viewport = page.getViewport({ scale });
  // pdfjs's own factory: pdfjs-dist pins its own @napi-rs/canvas, and a canvas from another copy
  // of the library refuses pdfjs's Path2D objects (and crashes the process on its images).
  const { canvas } = doc.canvasFactory.create(Math.ceil(viewport.width), Math.ceil(viewport.height));
  try {
    await page.render({ canvas, viewport, background: 'white' }).promise;
    const png = await canvas.encode('png');
    // Copied on this thread into a buffer that can be moved to the main one: Skia's may be
    // external memory or a slice of a pool, which a transfer would detach whole.
    const out = new Uint8Array(png.length);
    out.set(png);
    return out;
  } finally {
    // Skia frees the pixels on a zero size now, not when the collector comes round.
    canvas.width = 0;
  }
}

function described(e) {
  const type = e?.unavailable
    ? 'unavailable'
    : e instanceof TypeError
      ? 'TypeError'
      : e instanceof RangeError
        ? 'RangeError'
        : e instanceof ReferenceError
          ? 'ReferenceError'
          : 'Error';
  return { type, name: e?.name ?? 'Error', message: String(e?.message ?? e), stack: e?.stack };
}
`;
