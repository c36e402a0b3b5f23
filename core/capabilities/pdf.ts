import { areaPriced, capabilities } from './capability.js';
import { WATERMARK_POSITIONS } from './image.js';

// The PDF contracts: `pdf.render` (HTML or a URL to a PDF, a browser's work), `pdf.merge`,
// `pdf.split`, `pdf.watermark` (document edits) and `pdf.ocr` (text out of a PDF). The area
// fetches the caller's PDF and image URLs through the core's guarded egress, so an engine
// only ever sees bytes; a renderer reaches the network only through `fetchResource`, which
// the area binds to the same egress (an HTML page must not reach a private address).

export const PDF_FORMATS = ['A4', 'Letter', 'Legal'] as const;
export type PdfFormat = (typeof PDF_FORMATS)[number];
export const PDF_ORIENTATIONS = ['portrait', 'landscape'] as const;
export type PdfOrientation = (typeof PDF_ORIENTATIONS)[number];
// The same nine places an image watermark takes, so both areas' callers learn one list.
export const PDF_POSITIONS = WATERMARK_POSITIONS;
export type PdfPosition = (typeof PDF_POSITIONS)[number];

/** Limits (api-conventions.md, Limits). */
export const PDF_MAX_MERGE_URLS = 50;
export const PDF_MAX_SPLIT_RANGES = 100;
export const PDF_MAX_INPUT_BYTES = 50 * 1024 * 1024;

/** A subresource (or the page itself, for `url`) fetched for the renderer by the area's guarded egress. */
export interface FetchedResource {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}
/** Throws (an ApiError from the egress guard) when the address is refused. */
export type ResourceFetcher = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: Buffer }
) => Promise<FetchedResource>;

export interface PdfRenderInput {
  /** Exactly one of `html` and `url`. */
  html?: string;
  url?: string;
  format: PdfFormat;
  orientation: PdfOrientation;
  /** Run the page's scripts; off by default (the area's config). */
  javascript: boolean;
  /**
   * Every request the page makes (the `url` document included) goes through this; a renderer
   * never opens a connection of its own. A refused address fails that request only (an
   * `<img>` stays blank); a refused `url` document fails the render.
   */
  fetchResource: ResourceFetcher;
}

export interface PdfOutput {
  data: Buffer;
  pages: number;
}

export interface PdfMergeInput {
  /** In order; each a whole PDF's bytes. */
  documents: Buffer[];
}

/** 1-based, inclusive; `to` absent means to the last page. */
export interface PageRange {
  from: number;
  to?: number;
}
export interface PdfSplitInput {
  data: Buffer;
  ranges: PageRange[];
}
export interface PdfSplitOutput {
  parts: PdfOutput[];
}

export interface PdfWatermarkInput {
  data: Buffer;
  /** Exactly one of `text` and `image` (PNG or JPEG bytes). */
  text?: string;
  image?: Buffer;
  /** 0 (invisible) to 1 (opaque). */
  opacity: number;
  position: PdfPosition;
  /** Degrees counter-clockwise. */
  rotation: number;
}

export interface PdfOcrInput {
  data: Buffer;
  /** Tesseract language codes (`eng`, `deu`…), best first. */
  languages: string[];
}
export interface PdfOcrOutput {
  text: string;
  pages: { text: string; source: 'text_layer' | 'ocr' }[];
}

export const PDF_CAPABILITIES = capabilities({
  // Rendering the same HTML twice gives the same document: a second engine may be tried. The area
  // prices each call (plugins.pdf's prices, per call or per page), whichever engine serves it.
  'pdf.render': areaPriced<PdfRenderInput, PdfOutput>({
    idempotent: true,
    description: 'Render HTML or a web page to PDF in a headless browser.',
  }),
  'pdf.merge': areaPriced<PdfMergeInput, PdfOutput>({
    idempotent: true,
    description: 'Join PDFs into one, in order.',
  }),
  'pdf.split': areaPriced<PdfSplitInput, PdfSplitOutput>({
    idempotent: true,
    description: 'Cut page ranges out of a PDF, one document a range.',
  }),
  'pdf.watermark': areaPriced<PdfWatermarkInput, PdfOutput>({
    idempotent: true,
    description: 'Stamp text or an image on every page of a PDF.',
  }),
  'pdf.ocr': areaPriced<PdfOcrInput, PdfOcrOutput>({
    idempotent: true,
    description: "A PDF's text, page by page: its text layer, else recognised from the rendered page.",
  }),
});
