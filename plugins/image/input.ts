import { type Egress, apiError, IMAGE_MAX_INPUT_BYTES, fieldError } from '../../core/kit/area.js';
import type { ImageRefT } from './schemas.js';

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** The length without the trailing `=` padding, read from the end (no copy of the string). */
function unpadded(text: string): number {
  let n = text.length;
  while (n > 0 && text.charCodeAt(n - 1) === 61) n--;
  return n;
}

function overCap(param: string, bytes: number) {
  return apiError(
    'payload_too_large',
    `${param} is ${bytes} bytes, over the cap of ${IMAGE_MAX_INPUT_BYTES} bytes an image.`,
    {
      param,
      details: { max_bytes: IMAGE_MAX_INPUT_BYTES },
    }
  );
}

/**
 * An ImageRef's bytes: decoded from base64, or fetched by the core's guarded egress (SSRF
 * rules, time and size caps), so no engine ever reaches a caller's URL. Not checked to be an
 * image here: the engine says what it can decode.
 */
export async function imageBytes(ref: ImageRefT, egress: Egress, param: string): Promise<Buffer> {
  if ((ref.url === undefined) === (ref.base64 === undefined))
    throw fieldError(param, 'needs exactly one of url or base64');
  if (ref.url !== undefined) {
    const p = `${param}.url`;
    const res = await egress.fetch(ref.url, {
      param: p,
      maxBytes: Math.min(egress.cfg.max_bytes, IMAGE_MAX_INPUT_BYTES),
    });
    if (res.status < 200 || res.status > 299)
      throw apiError('unprocessable', `${p} answered HTTP ${res.status}, not an image.`, {
        param: p,
        details: { status: res.status },
      });
    return res.body;
  }
  const p = `${param}.base64`;
  // One scan of the common case; copies only for a data: prefix or line-wrapped (MIME) base64.
  let text = ref.base64!.startsWith('data:') ? ref.base64!.replace(/^data:[^,]*;base64,/i, '') : ref.base64!;
  if (!BASE64.test(text)) text = text.replace(/\s+/g, '');
  if (!text || !BASE64.test(text) || unpadded(text) % 4 === 1) throw fieldError(p, 'is not valid base64');
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length > IMAGE_MAX_INPUT_BYTES) throw overCap(p, bytes.length);
  return bytes;
}
