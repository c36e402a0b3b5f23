import type { IImage } from 'image-size/types/interface';

/** What the engine needs of an input before its pixels: the lane, the caps, the output's size and format. */
export interface Header {
  format?: string;
  width?: number;
  height?: number;
  orientation?: number;
  /** HEIF's codec: AV1 is AVIF. */
  compression?: string;
}

// sharp's metadata() is a libvips call of its own (an operation built, a thread-pool hop, ~50
// fields copied into JavaScript): ~0.5 ms of CPU a call on the bench machine, where these
// readers take ~10 µs. Only JPEG and PNG, the common uploads, are read here; anything they do
// not read plainly (another format, an arithmetic-coded or broken JPEG, a PNG that carries its
// orientation in an eXIf chunk) is left to sharp, which also gives the error a broken file earns.
let readers: Promise<{ jpg: IImage; png: IImage }> | undefined;

function load() {
  readers ??= Promise.all([import('image-size/types/jpg'), import('image-size/types/png')]).then(([j, p]) => ({
    jpg: j.JPG,
    png: p.PNG,
  }));
  return readers;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * Whether a PNG's chunks before its pixel data hold only what libvips reads no orientation
 * from: no eXIf (which may rotate it) and not Apple's CgBI variant. Chunks are length-prefixed,
 * so this walks a few headers, never the pixels.
 */
function plainPng(data: Buffer): boolean {
  for (let at = 8; at + 8 <= data.length; ) {
    const type = data.toString('latin1', at + 4, at + 8);
    if (type === 'IDAT' || type === 'IEND') return true;
    if (type === 'eXIf' || type === 'CgBI') return false;
    at += 12 + data.readUInt32BE(at);
  }
  return false;
}

/** The header of a plain JPEG or PNG, read in JavaScript; undefined for anything else, left to sharp. */
export async function quickHeader(data: Buffer): Promise<Header | undefined> {
  const isJpeg = data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff;
  const isPng = !isJpeg && data.subarray(0, 8).equals(PNG_SIGNATURE);
  if (!isJpeg && !isPng) return undefined;
  if (isPng && !plainPng(data)) return undefined;
  const { jpg, png } = await load();
  try {
    const size = (isJpeg ? jpg : png).calculate(data);
    if (!size.width || !size.height) return undefined;
    return {
      format: isJpeg ? 'jpeg' : 'png',
      width: size.width,
      height: size.height,
      ...(size.orientation ? { orientation: size.orientation } : {}),
    };
  } catch {
    return undefined;
  }
}
