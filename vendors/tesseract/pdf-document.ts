import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { refused } from './refused.js';

/** Largest raster handed to Tesseract: a poster-sized page is scaled below its dpi rather than taking 1 GB. */
export const MAX_RASTER_PIXELS = 40_000_000;
/** @napi-rs/canvas (Skia) refuses a side longer than this. */
export const MAX_RASTER_SIDE = 16_384;

const require = createRequire(import.meta.url);

/** What a PDF worker thread loads pdfjs-dist from: found here, so the worker resolves nothing itself. */
export interface PdfJsFiles {
  /** The legacy (Node) build, as a file URL for the worker's dynamic import. */
  module: string;
  /**
   * The package's own fonts, CMaps and image decoders, read from disk (pdfjs in Node reads a
   * factory URL with fs): a PDF that names a standard font or a CJK encoding renders with no fetch.
   */
  assets: { standardFontDataUrl: string; cMapUrl: string; wasmUrl: string };
}

export function pdfjsFiles(): PdfJsFiles {
  const root = dirname(require.resolve('pdfjs-dist/package.json'));
  const dir = (name: string) => `${join(root, name)}/`;
  return {
    module: pathToFileURL(require.resolve('pdfjs-dist/legacy/build/pdf.mjs')).href,
    assets: { standardFontDataUrl: dir('standard_fonts'), cMapUrl: dir('cmaps'), wasmUrl: dir('wasm') },
  };
}

/** Throws, naming the package, when a library OCR loads on its first call is not installed. */
export function librariesInstalled(): void {
  const root = dirname(require.resolve('pdfjs-dist/package.json'));
  require.resolve('pdfjs-dist/legacy/build/pdf.mjs');
  // pdfjs draws with the @napi-rs/canvas it depends on, found from its own folder.
  createRequire(join(root, 'package.json')).resolve('@napi-rs/canvas');
  require.resolve('tesseract.js');
}

/** pdfjs refusing to open the document: the caller's error when it is encrypted or not a PDF. */
export function openFailure(e: unknown): unknown {
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

/** Trailing spaces and runs of blank lines dropped, so both sources read alike. */
export function tidy(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
