import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { PDFDocumentProxy, PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { PDF_MAX_INPUT_BYTES } from '../../core/capabilities/pdf.js';
import { refused } from './refused.js';

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');

/** Largest raster handed to Tesseract: a poster-sized page is scaled below its dpi rather than taking 1 GB. */
export const MAX_RASTER_PIXELS = 40_000_000;
/** @napi-rs/canvas (Skia) refuses a side longer than this. */
const MAX_RASTER_SIDE = 16_384;

const require = createRequire(import.meta.url);
let lib: Promise<PdfJs> | undefined;

/** pdfjs-dist, loaded on the first OCR call: most gateways never read a PDF's text. */
export function pdfjs(): Promise<PdfJs> {
  lib ??= import('pdfjs-dist/legacy/build/pdf.mjs');
  return lib;
}

/**
 * The package's own fonts, CMaps and image decoders, read from disk (pdfjs in Node reads a
 * factory URL with fs): a PDF that names a standard font or a CJK encoding renders with no fetch.
 */
function assets(): { standardFontDataUrl: string; cMapUrl: string; wasmUrl: string } {
  const root = dirname(require.resolve('pdfjs-dist/package.json'));
  const dir = (name: string) => `${join(root, name)}/`;
  return { standardFontDataUrl: dir('standard_fonts'), cMapUrl: dir('cmaps'), wasmUrl: dir('wasm') };
}

/** Throws, naming the package, when a library OCR loads on its first call is not installed. */
export function librariesInstalled(): void {
  const root = dirname(require.resolve('pdfjs-dist/package.json'));
  require.resolve('pdfjs-dist/legacy/build/pdf.mjs');
  // pdfjs draws with the @napi-rs/canvas it depends on, found from its own folder.
  createRequire(join(root, 'package.json')).resolve('@napi-rs/canvas');
  require.resolve('tesseract.js');
}

/** The document, or the caller's error when it is too big, encrypted or not a PDF. */
export async function openPdf(data: Buffer): Promise<PDFDocumentProxy> {
  if (data.length > PDF_MAX_INPUT_BYTES) {
    throw refused(`The PDF is ${data.length} bytes, over the cap of ${PDF_MAX_INPUT_BYTES} bytes.`, 413);
  }
  const pdf = await pdfjs();
  // A copy: pdfjs takes ownership of (and may detach) the array it is given, and the Buffer may be a pooled slice.
  const task = pdf.getDocument({
    data: new Uint8Array(data),
    ...assets(),
    cMapPacked: true,
    disableFontFace: true,
    useSystemFonts: false,
    verbosity: pdf.VerbosityLevel.ERRORS,
  });
  try {
    return await task.promise;
  } catch (e) {
    await task.destroy().catch(() => {});
    throw openFailure(e);
  }
}

function openFailure(e: unknown): unknown {
  const name = (e as Error)?.name;
  const message = String((e as Error)?.message ?? e);
  if (name === 'PasswordException') {
    return refused('The PDF is encrypted with a password; send it decrypted.');
  }
  if (name === 'InvalidPDFException' || name === 'FormatError' || name === 'UnknownErrorException') {
    return refused(`The PDF cannot be read (not a PDF, or corrupt): ${message}`);
  }
  // The gateway's own bug stays one: the router answers 500 and cools nothing down.
  if (e instanceof TypeError || e instanceof RangeError || e instanceof ReferenceError) return e;
  return refused(`The PDF cannot be read: ${message}`);
}

/** The page's text layer, lines as the PDF ends them; empty for a scan. */
export async function textLayer(page: PDFPageProxy): Promise<string> {
  const content = await page.getTextContent();
  let text = '';
  for (const item of content.items) {
    if (!('str' in item)) continue;
    text += item.str;
    if (item.hasEOL) text += '\n';
  }
  return tidy(text);
}

/** Trailing spaces and runs of blank lines dropped, so both sources read alike. */
export function tidy(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** The bits of pdfjs's canvas factory used here (typed `Object` in its declarations). */
interface CanvasFactory {
  create(width: number, height: number): { canvas: { encode(format: 'png'): Promise<Buffer>; width: number } };
}

/** The page drawn at `dpi` (less for a huge page) as PNG, white behind. */
export async function rasterise(doc: PDFDocumentProxy, page: PDFPageProxy, dpi: number): Promise<Buffer> {
  const base = page.getViewport({ scale: 1 });
  let scale = dpi / 72;
  const pixels = base.width * base.height * scale * scale;
  if (pixels > MAX_RASTER_PIXELS) scale *= Math.sqrt(MAX_RASTER_PIXELS / pixels);
  scale = Math.min(scale, MAX_RASTER_SIDE / Math.max(base.width, base.height));
  const viewport = page.getViewport({ scale });
  // pdfjs's own factory: pdfjs-dist pins its own @napi-rs/canvas, and a canvas from another copy
  // of the library refuses pdfjs's Path2D objects (and crashes the process on its images).
  const factory = doc.canvasFactory as CanvasFactory;
  const { canvas } = factory.create(Math.ceil(viewport.width), Math.ceil(viewport.height));
  try {
    await page.render({ canvas: canvas as unknown as HTMLCanvasElement, viewport, background: 'white' }).promise;
    // Skia encodes on its own thread pool, off the event loop.
    return await canvas.encode('png');
  } finally {
    // Skia frees the pixels on a zero size now, not when the collector comes round.
    canvas.width = 0;
  }
}
