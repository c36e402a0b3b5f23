import { type Egress, apiError, type InlineImage, fieldError } from '../../../core/kit/area.js';

/** The image types every vision vendor (OpenAI, Anthropic, Gemini) accepts. */
export const IMAGE_MIMES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;
type Mime = (typeof IMAGE_MIMES)[number];

/** One image's cap (OpenAI's own per-image limit). */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
/** All images of one call together: the body limit of the vision endpoint. */
export const MAX_TOTAL_BYTES = 25 * 1024 * 1024;

/** The image type the bytes are, by their signature; undefined when they are none of the four. */
export function sniffImage(b: Buffer): Mime | undefined {
  if (
    b.length >= 24
    && b.readUInt32BE(0) === 0x89504e47
    && b.readUInt32BE(4) === 0x0d0a1a0a
    && b.toString('latin1', 12, 16) === 'IHDR'
  )
    return 'image/png';
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (b.length >= 10 && /^GIF8[79]a$/.test(b.toString('latin1', 0, 6))) return 'image/gif';
  if (b.length >= 16 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP')
    return 'image/webp';
  return undefined;
}

const DATA_URL = /^data:([^;,]+)(?:;[^,]*)?;base64,/i;
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/** Strict base64 (standard or URL-safe, padding optional), with an optional data: URL prefix. */
export function decodeBase64(raw: string, param: string): { bytes: Buffer; declared?: string } {
  const m = DATA_URL.exec(raw);
  const text = (m ? raw.slice(m[0].length) : raw).replace(/\s+/g, '');
  if (!text || !BASE64.test(text) || text.replace(/=+$/, '').length % 4 === 1)
    throw fieldError(param, 'is not valid base64');
  const declared = m?.[1].toLowerCase();
  return { bytes: Buffer.from(text, 'base64'), declared: declared === 'image/jpg' ? 'image/jpeg' : declared };
}

/** Bytes that must be one of the four image types, and the type the caller said if they said one. */
export function checkImage(bytes: Buffer, param: string, declared?: string): InlineImage {
  if (bytes.length > MAX_IMAGE_BYTES)
    throw apiError(
      'payload_too_large',
      `${param} is ${bytes.length} bytes, over the cap of ${MAX_IMAGE_BYTES} bytes an image.`,
      { param, details: { max_bytes: MAX_IMAGE_BYTES } }
    );
  const mime = sniffImage(bytes);
  if (!mime) throw apiError('unprocessable', `${param} is not a PNG, JPEG, GIF or WebP image.`, { param });
  if (declared && declared !== mime)
    throw apiError('unprocessable', `${param} is ${mime} data, not ${declared} as the request says.`, { param });
  return { mime, data: bytes.toString('base64') };
}

export type ImageRef = { url?: string; base64?: string; mime?: string };
/** The request field an image came from, for error `param`s. */
export type ParamOf = (index: number, field?: 'url' | 'base64') => string;

/**
 * The caller's images as inline bytes. URLs are fetched here, through the egress guard
 * (SSRF rules, time and size caps), so a vendor never reaches a caller's URL and a refused
 * or broken one fails before anything is reserved.
 */
export async function resolveImages(
  refs: ImageRef[],
  egress: Egress,
  paramOf: ParamOf = (i, field) => `images[${i}]${field ? `.${field}` : ''}`
): Promise<InlineImage[]> {
  for (const [i, ref] of refs.entries()) {
    if ((ref.url === undefined) === (ref.base64 === undefined))
      throw fieldError(paramOf(i), 'needs exactly one of url or base64');
  }
  const out: InlineImage[] = [];
  let total = 0;
  for (const [i, ref] of refs.entries()) {
    let bytes: Buffer;
    let declared: string | undefined;
    let p: string;
    if (ref.url !== undefined) {
      p = paramOf(i, 'url');
      const res = await egress.fetch(ref.url, {
        param: p,
        maxBytes: Math.min(egress.cfg.max_bytes, MAX_IMAGE_BYTES, MAX_TOTAL_BYTES - total),
      });
      if (res.status < 200 || res.status > 299)
        throw apiError('unprocessable', `${p} answered HTTP ${res.status}, not an image.`, {
          param: p,
          details: { status: res.status },
        });
      bytes = res.body;
    } else {
      p = paramOf(i, 'base64');
      ({ bytes, declared } = decodeBase64(ref.base64!, p));
    }
    declared = ref.mime ?? declared;
    total += bytes.length;
    if (total > MAX_TOTAL_BYTES)
      throw apiError('payload_too_large', `The images are over ${MAX_TOTAL_BYTES} bytes together.`, {
        param: p,
        details: { max_bytes: MAX_TOTAL_BYTES },
      });
    out.push(checkImage(bytes, p, declared));
  }
  return out;
}
