/**
 * What an image's first bytes say it is, read in JavaScript before any decoder sees it. libvips
 * picks its loader by sniffing too, and it has loaders for SVG (librsvg parses the whole XML:
 * 4 × 20 MB SVGs took the gateway from 222 MiB to 5.2 GB just to be refused), PDF, and more:
 * a file is handed to an engine only when its own signature is one of the decoded formats, so
 * no other loader can be chosen for it, whatever its name or declared type says.
 */
export type SniffedImage = 'jpeg' | 'png' | 'webp' | 'gif' | 'tiff' | 'heif';

/** ISO-BMFF brands of HEIF still images, AVIF included. */
const HEIF_BRANDS = new Set([
  'heic',
  'heix',
  'hevc',
  'hevx',
  'heim',
  'heis',
  'hevm',
  'hevs',
  'mif1',
  'msf1',
  'avif',
  'avis',
]);

const startsWith = (data: Buffer, bytes: number[], at = 0) => bytes.every((b, i) => data[at + i] === b);
const ascii = (data: Buffer, from: number, to: number) => data.toString('latin1', from, to);

function heif(data: Buffer): boolean {
  if (data.length < 16 || ascii(data, 4, 8) !== 'ftyp') return false;
  // The ftyp box: size, 'ftyp', major brand, minor version, then compatible brands to its end.
  const end = Math.min(data.length, data.readUInt32BE(0));
  if (HEIF_BRANDS.has(ascii(data, 8, 12))) return true;
  for (let at = 16; at + 4 <= end; at += 4) if (HEIF_BRANDS.has(ascii(data, at, at + 4))) return true;
  return false;
}

export function sniffImage(data: Buffer): SniffedImage | undefined {
  if (startsWith(data, [0xff, 0xd8, 0xff])) return 'jpeg';
  if (startsWith(data, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'png';
  if (ascii(data, 0, 4) === 'RIFF' && ascii(data, 8, 12) === 'WEBP') return 'webp';
  if (ascii(data, 0, 6) === 'GIF87a' || ascii(data, 0, 6) === 'GIF89a') return 'gif';
  // Classic and BigTIFF, either byte order.
  if (['II*\0', 'MM\0*', 'II+\0', 'MM\0+'].includes(ascii(data, 0, 4))) return 'tiff';
  if (heif(data)) return 'heif';
  return undefined;
}

/** The 422 message for bytes sniffImage does not admit. */
export function notAnImage(what = 'input'): string {
  return `The ${what} is not a JPEG, PNG, WebP, GIF, AVIF, HEIF or TIFF image (by its first bytes); SVG, PDF and other types are not decoded.`;
}

/**
 * The libvips loaders the engines may use: from a buffer, the six formats sniffImage admits.
 * Every other loader (SVG, PDF, ImageMagick, FITS, Matrix, CSV, the file and stream loaders) is
 * blocked in the process by `lockLoaders`, so a bug past the sniffing cannot reach one.
 */
export const IMAGE_LOADERS = [
  'VipsForeignLoadJpegBuffer',
  'VipsForeignLoadPngBuffer',
  'VipsForeignLoadWebpBuffer',
  'VipsForeignLoadNsgifBuffer',
  'VipsForeignLoadTiffBuffer',
  'VipsForeignLoadHeifBuffer',
];

/** Blocks every libvips loader but IMAGE_LOADERS in this process; sharp is passed in, core never loads it. */
export function lockLoaders(sharp: {
  block(o: { operation: string[] }): void;
  unblock(o: { operation: string[] }): void;
}): void {
  sharp.block({ operation: ['VipsForeignLoad'] });
  sharp.unblock({ operation: IMAGE_LOADERS });
}
