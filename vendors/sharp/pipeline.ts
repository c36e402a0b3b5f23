import type { Sharp } from 'sharp';
import {
  IMAGE_MAX_OUTPUT_PIXELS,
  IMAGE_MIME,
  type ImageFormat,
  type ImageOp,
  type ImageProcessInput,
  type ImageProcessOutput,
  type ResizeOp,
} from '../../core/kit/vendor.js';
import { DECODE, refused, type SharpEngine } from './engine.js';
import { watermarkLayer } from './watermark.js';

type SharpFn = Awaited<ReturnType<SharpEngine['sharp']>>;
type PixelOp = Exclude<ImageOp, { op: 'compress' } | { op: 'convert' }>;
interface Raw {
  data: Buffer;
  width: number;
  height: number;
  channels: 1 | 2 | 3 | 4;
}

/** Input formats written back as they came; any other (GIF, TIFF, HEIC) becomes PNG. */
const KEPT: Record<string, ImageFormat> = { jpeg: 'jpeg', png: 'png', webp: 'webp', avif: 'avif' };

/** The size a resize makes of a `width` × `height` image, as sharp computes it. */
export function resized(op: ResizeOp, width: number, height: number): { width: number; height: number } {
  const sw = op.width ? op.width / width : undefined;
  const sh = op.height ? op.height / height : undefined;
  if (sw !== undefined && sh !== undefined) {
    const fit = op.fit ?? 'cover';
    if (fit === 'inside' || fit === 'outside') {
      const s = fit === 'inside' ? Math.min(sw, sh) : Math.max(sw, sh);
      return { width: Math.round(width * s), height: Math.round(height * s) };
    }
    return { width: op.width!, height: op.height! };
  }
  const s = (sw ?? sh)!;
  return { width: Math.max(1, Math.round(width * s)), height: Math.max(1, Math.round(height * s)) };
}

/** The bounding box of a rotation by `angle` degrees. */
function rotated(angle: number, width: number, height: number): { width: number; height: number } {
  const r = (angle * Math.PI) / 180;
  const c = Math.abs(Math.cos(r));
  const s = Math.abs(Math.sin(r));
  return { width: Math.ceil(width * c + height * s), height: Math.ceil(width * s + height * c) };
}

function checkOutput(size: { width: number; height: number }, op: string): void {
  if (size.width * size.height > IMAGE_MAX_OUTPUT_PIXELS) {
    throw refused(
      `${op} would make a ${size.width}×${size.height} image, over the cap of ${IMAGE_MAX_OUTPUT_PIXELS / 1e6} MP.`,
      413
    );
  }
}

/** The output's format and quality: the last convert's, a later compress's quality, else the input's. */
function encoding(ops: ImageOp[], inputFormat: string): { format: ImageFormat; quality?: number } {
  let format: ImageFormat = KEPT[inputFormat] ?? 'png';
  let quality: number | undefined;
  for (const op of ops) {
    if (op.op === 'convert') ({ format, quality } = op);
    else if (op.op === 'compress') quality = op.quality ?? 75;
  }
  return { format, quality };
}

function encode(p: Sharp, format: ImageFormat, quality?: number): Sharp {
  // libjpeg and the others take 1 to 100; 0 is their lowest.
  const q = quality === undefined ? undefined : Math.max(1, Math.round(quality));
  if (format === 'png') return q === undefined ? p.png() : p.png({ palette: true, quality: q });
  return p.toFormat(format, q === undefined ? {} : { quality: q });
}

/**
 * The operations in the order given. sharp orders the steps of one pipeline itself (rotate
 * before resize, composite last), so each pixel operation is a pipeline of its own over the
 * previous one's raw pixels; the first one also decodes and orients (and keeps sharp's
 * shrink-on-load for a first resize), the last one also encodes. Nothing of the input's
 * metadata is written (outputs carry no EXIF, GPS included) unless `keep_metadata` asks for
 * its EXIF: then the steps between pass a PNG (lossless, stored, EXIF kept) instead of raw
 * pixels, which carry no metadata. The orientation tag is not kept: the pixels are oriented.
 */
export async function processImage(
  engine: SharpEngine,
  sharp: SharpFn,
  input: ImageProcessInput
): Promise<ImageProcessOutput> {
  const { meta, width, height } = await engine.probe(sharp, input.data);
  const pixelOps = input.operations.filter(
    (o): o is PixelOp => o.op !== 'compress' && o.op !== 'convert' && !(o.op === 'rotate' && o.angle === undefined)
  );
  // AVIF is HEIF with AV1 inside: written back as AVIF; HEIC (HEVC) is not one of the four.
  const inputFormat = meta.format === 'heif' && meta.compression === 'av1' ? 'avif' : meta.format!;
  const { format, quality } = encoding(input.operations, inputFormat);
  const keep = input.keep_metadata === true;
  let size = { width, height };
  let raw: Raw | undefined;
  let step: Buffer | undefined;
  const start = (): Sharp => {
    if (step) return sharp(step, DECODE).keepExif();
    if (raw) return sharp(raw.data, { raw: { width: raw.width, height: raw.height, channels: raw.channels } });
    const p = sharp(input.data, DECODE).autoOrient();
    return keep ? p.keepExif() : p;
  };
  for (const [i, op] of pixelOps.entries()) {
    let p = start();
    if (op.op === 'resize') {
      size = resized(op, size.width, size.height);
      checkOutput(size, 'resize');
      // sharp pads `contain` with opaque black unless told: transparent, as rotate's corners.
      p = p.resize({
        width: op.width,
        height: op.height,
        fit: op.fit ?? 'cover',
        background: op.background ?? '#00000000',
      });
    } else if (op.op === 'rotate') {
      size = rotated(op.angle!, size.width, size.height);
      checkOutput(size, 'rotate');
      p = p.rotate(op.angle, { background: op.background ?? '#00000000' });
    } else {
      p = p.composite([await watermarkLayer(engine, sharp, op, size)]);
    }
    if (i === pixelOps.length - 1) return finish(encode(p, format, quality), format);
    if (keep) {
      const out = await p.png({ compressionLevel: 0 }).toBuffer({ resolveWithObject: true });
      step = out.data;
      size = { width: out.info.width, height: out.info.height };
      continue;
    }
    const out = await p.raw().toBuffer({ resolveWithObject: true });
    raw = { data: out.data, width: out.info.width, height: out.info.height, channels: out.info.channels };
    size = { width: raw.width, height: raw.height };
  }
  return finish(encode(start(), format, quality), format);
}

async function finish(p: Sharp, format: ImageFormat): Promise<ImageProcessOutput> {
  const { data, info } = await p.toBuffer({ resolveWithObject: true });
  return { data, format, mime: IMAGE_MIME[format], width: info.width, height: info.height };
}
