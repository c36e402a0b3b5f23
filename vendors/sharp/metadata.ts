import type { ImageMetadataInput, ImageMetadataOutput } from '../../core/kit/vendor.js';
import type { SharpEngine } from './engine.js';

type SharpFn = Awaited<ReturnType<SharpEngine['sharp']>>;
type ExifValue = NonNullable<ImageMetadataOutput['exif']>[string];

const MIME: Record<string, string> = {
  jpeg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  gif: 'image/gif',
  tiff: 'image/tiff',
};

/** EXIF's blocks (camera, capture, GPS), not a PNG's header nor XMP, ICC or IPTC. */
const EXIF_ONLY = {
  ifd0: {},
  exif: true,
  gps: true,
  interop: false,
  ifd1: false,
  xmp: false,
  icc: false,
  iptc: false,
  jfif: false,
  ihdr: false,
  mergeOutput: true,
};

/** One EXIF value as JSON can carry it: dates as ISO strings, binary blobs (maker notes, thumbnails) left out. */
function flatValue(v: unknown): ExifValue | undefined {
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? undefined : v.toISOString();
  if (typeof v === 'string') return v.replace(/\u0000+$/, '');
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v === 'boolean') return v;
  if (Array.isArray(v) && v.length <= 64 && v.every((x) => typeof x === 'number' || typeof x === 'string')) return v;
  return undefined;
}

/** Dimensions as shown (after the orientation tag), the type, and the EXIF tags flat (exifr's names). */
export async function readMetadata(
  engine: SharpEngine,
  sharp: SharpFn,
  input: ImageMetadataInput
): Promise<ImageMetadataOutput> {
  const { meta, width, height } = await engine.probe(sharp, input.data);
  const mime = meta.format === 'heif' ? (meta.compression === 'av1' ? 'image/avif' : 'image/heic') : MIME[meta.format!];
  const exifr = (await import('exifr')).default;
  // A broken EXIF block is the image's business, not a failed call: the image is still described.
  const tags: Record<string, unknown> | undefined = await exifr.parse(input.data, EXIF_ONLY).catch(() => undefined);
  const exif: Record<string, ExifValue> = {};
  for (const [k, v] of Object.entries(tags ?? {})) {
    const flat = flatValue(v);
    if (flat !== undefined) exif[k] = flat;
  }
  return { width, height, mime, ...(Object.keys(exif).length ? { exif } : {}) };
}
