import { deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { pngChunk } from './images.js';

// Real images for the image area's tests, made with sharp: with EXIF (GPS included) and an
// orientation tag, and broken ones (truncated, a pixel bomb).

/** GPS as sharp writes EXIF (rationals), near Greenwich. */
export const GPS_EXIF = {
  IFD0: { Make: 'TestCam', Model: 'T-1' },
  IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '51/1 28/1 0/1', GPSLongitudeRef: 'W', GPSLongitude: '0/1 0/1 5/1' },
};

/** A `width`×`height` JPEG of one colour carrying camera and GPS tags, and `orientation` when given. */
export async function jpegWithGps(width: number, height: number, orientation?: number): Promise<Buffer> {
  let p = sharp({ create: { width, height, channels: 3, background: '#3366cc' } })
    .jpeg({ quality: 90 })
    .withExif(GPS_EXIF);
  if (orientation) p = p.withMetadata({ orientation });
  return p.toBuffer();
}

/** A PNG of one colour. */
export function solidPng(width: number, height: number, background = '#808080'): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background } })
    .png()
    .toBuffer();
}

/** The RGB of one pixel. */
export async function pixel(image: Buffer, x: number, y: number): Promise<[number, number, number]> {
  const { data, info } = await sharp(image).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const i = (y * info.width + x) * info.channels;
  return [data[i], data[i + 1], data[i + 2]];
}

/**
 * A decompression bomb: a few hundred bytes whose header says 16384×16384 RGBA (1 GiB of
 * pixels) and whose data is a short run of zeros. Decoding it would allocate the gigabyte.
 */
export function pngBomb(): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(16384, 0);
  ihdr.writeUInt32BE(16384, 4);
  ihdr[8] = 8;
  ihdr[9] = 6;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(Buffer.alloc(4096))),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/**
 * A subject on a flat background: a `size`² white-ish image with a dark red disc in the middle
 * (radius a quarter of the side), for background removal. A disc, not a square, so the model
 * sees an object rather than a frame.
 */
export function subjectOnFlat(size = 320): Promise<Buffer> {
  // Drawn pixel by pixel, not as SVG: the image engines block libvips' SVG loader in the process.
  const r = size / 4;
  const c = size / 2;
  const rgb = Buffer.alloc(size * size * 3, 0xf4);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      if ((x + 0.5 - c) ** 2 + (y + 0.5 - c) ** 2 > r * r) continue;
      rgb.set([0xb0, 0x18, 0x18], (y * size + x) * 3);
    }
  }
  return sharp(rgb, { raw: { width: size, height: size, channels: 3 } })
    .png()
    .toBuffer();
}

/** The alpha (0–255) of one pixel; 255 for an image without an alpha channel. */
export async function alphaAt(image: Buffer, x: number, y: number): Promise<number> {
  const { data, info } = await sharp(image).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return data[(y * info.width + x) * info.channels + 3];
}
