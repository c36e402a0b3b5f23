import { apiError, type ImageFile } from '../../../core/kit/area.js';
import { MAX_IMAGE_BYTES, sniffImage } from './image-input.js';

// The images an edit or a variation uploads: checked here, before anything is routed,
// reserved or sent, so a refused upload charges nothing.

/** At most this many images an edit (OpenAI's own cap for gpt-image models). */
export const MAX_EDIT_IMAGES = 16;
/** One uploaded image's cap (as for vision inputs). */
export const MAX_UPLOAD_IMAGE_BYTES = MAX_IMAGE_BYTES;
/** A mask's cap (OpenAI's: under 4 MB). */
export const MAX_MASK_BYTES = 4 * 1024 * 1024;

const EDITABLE = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp' } as const;

/** Bytes that must be a PNG, JPEG or WebP (a mask: a PNG) under the cap, as an ImageFile named for its type. */
export function imageFile(
  bytes: Buffer,
  param: string,
  opts: { maxBytes?: number; pngOnly?: boolean } = {}
): ImageFile {
  const max = opts.maxBytes ?? MAX_UPLOAD_IMAGE_BYTES;
  if (bytes.length > max)
    throw apiError('payload_too_large', `${param} is ${bytes.length} bytes, over the cap of ${max} bytes.`, {
      param,
      details: { max_bytes: max },
    });
  const mime = sniffImage(bytes);
  if (opts.pngOnly ? mime !== 'image/png' : !mime || !(mime in EDITABLE)) {
    throw apiError('unprocessable', `${param} is not a ${opts.pngOnly ? 'PNG' : 'PNG, JPEG or WebP'} image.`, {
      param,
    });
  }
  const m = mime as keyof typeof EDITABLE;
  return { data: bytes, mime: m, filename: `${param.replace(/\W+/g, '-').replace(/-+$/, '')}.${EDITABLE[m]}` };
}

/** The count cap, checked before the bytes are. */
export function checkImageCount(count: number, param: string): void {
  if (count > MAX_EDIT_IMAGES)
    throw apiError('payload_too_large', `${param} has ${count} images, over the cap of ${MAX_EDIT_IMAGES} an edit.`, {
      param,
      details: { max_items: MAX_EDIT_IMAGES },
    });
}
