import { areaPriced, capabilities } from './capability.js';

// The image contracts: `image.process` (an ordered list of operations on one image) and
// `image.metadata`. The area fetches or decodes the caller's ImageRefs (egress rules apply
// there), so an engine only ever sees bytes; it never reaches a caller's URL.

/** Input caps (api-conventions.md, Limits): a bigger image is 413 before it is decoded. */
export const IMAGE_MAX_INPUT_PIXELS = 40_000_000;
export const IMAGE_MAX_INPUT_BYTES = 25 * 1024 * 1024;
/** The largest output an operation list may ask for, for the same reason (memory, CPU). */
export const IMAGE_MAX_OUTPUT_PIXELS = IMAGE_MAX_INPUT_PIXELS;

export const IMAGE_FORMATS = ['jpeg', 'png', 'webp', 'avif'] as const;
export type ImageFormat = (typeof IMAGE_FORMATS)[number];
export const IMAGE_FITS = ['cover', 'contain', 'fill', 'inside', 'outside'] as const;
export const WATERMARK_POSITIONS = [
  'center',
  'top',
  'bottom',
  'left',
  'right',
  'top_left',
  'top_right',
  'bottom_left',
  'bottom_right',
] as const;
export type WatermarkPosition = (typeof WATERMARK_POSITIONS)[number];

export const IMAGE_MIME: Record<ImageFormat, string> = {
  jpeg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  avif: 'image/avif',
};

export interface ResizeOp {
  op: 'resize';
  width?: number;
  height?: number;
  fit?: (typeof IMAGE_FITS)[number];
  /** `#rrggbb` or `#rrggbbaa`: the padding of `fit: contain`; default transparent. */
  background?: string;
}
/** No angle: orient by the EXIF tag (outputs carry no EXIF, so inputs are always oriented first anyway). */
export interface RotateOp {
  op: 'rotate';
  angle?: number;
  background?: string;
}
export interface WatermarkOp {
  op: 'watermark';
  text?: string;
  /** The overlay's bytes (the area resolved the caller's ImageRef). */
  image?: Buffer;
  position: WatermarkPosition;
  /** 0 (invisible) to 1 (opaque). */
  opacity: number;
  /** The mark's width as a fraction of the image's. */
  size: number;
}
export interface CompressOp {
  op: 'compress';
  quality?: number;
}
export interface ConvertOp {
  op: 'convert';
  format: ImageFormat;
  quality?: number;
}
export type ImageOp = ResizeOp | RotateOp | WatermarkOp | CompressOp | ConvertOp;

export interface ImageProcessInput {
  data: Buffer;
  /** Applied in order; the output format is the last `convert`'s, else the input's when it is one of the four. */
  operations: ImageOp[];
  /** Keep the input's EXIF (GPS included) in the output; off by default. */
  keep_metadata?: boolean;
}

export interface ImageProcessOutput {
  data: Buffer;
  format: ImageFormat;
  mime: string;
  width: number;
  height: number;
}

export interface ImageMetadataInput {
  data: Buffer;
}

export interface ImageMetadataOutput {
  /** As shown: after the EXIF orientation. */
  width: number;
  height: number;
  mime: string;
  /** Flat tag name to value; absent when the image has none. */
  exif?: Record<string, string | number | boolean | Array<string | number>>;
}

export const IMAGE_CAPABILITIES = capabilities({
  // Pure functions of their input: a second engine may be tried. The area prices each call
  // (plugins.image's prices), whichever engine serves it.
  'image.process': areaPriced<ImageProcessInput, ImageProcessOutput>({
    idempotent: true,
    description: 'Resize, rotate, watermark, compress and convert an image.',
  }),
  'image.metadata': areaPriced<ImageMetadataInput, ImageMetadataOutput>({
    idempotent: true,
    description: 'Dimensions, type and EXIF of an image.',
  }),
  'image.remove_background': areaPriced<ImageMetadataInput, ImageProcessOutput>({
    idempotent: true,
    description: 'Cut the subject out of an image (transparent background).',
  }),
});
