import type { ServerResponse } from 'node:http';
import { createHash } from 'node:crypto';
import type { FakeRequest } from './script.js';
import { imageType, seededPng } from './images.js';

// OpenAI's image upload endpoints for the OpenAI fake, as the real API takes them:
// POST /images/edits (multipart: `image` or repeated `image[]`, `mask?`, `prompt`, `model`,
// `n`, `size`, `response_format`/`quality`) and POST /images/variations (DALL·E 2: one square
// PNG). Both answer as /images/generations does. What each request carried is recorded.

type Fail = (status: number, message: string) => void;

export interface ReceivedUpload {
  path: '/images/edits' | '/images/variations';
  fields: Record<string, string>;
  images: Array<{ field: string; name: string; type: string; bytes: Buffer }>;
  mask?: { name: string; type: string; bytes: Buffer };
}

const SIZES: Record<string, string[]> = {
  'dall-e-2': ['256x256', '512x512', '1024x1024'],
  'gpt-image-1': ['1024x1024', '1536x1024', '1024x1536', 'auto'],
};
const MB4 = 4 * 1024 * 1024;

function pngSize(b: Buffer): [number, number] | undefined {
  return imageType(b) === 'image/png' && b.length >= 24 ? [b.readUInt32BE(16), b.readUInt32BE(20)] : undefined;
}

export class OpenAiImageUploadFake {
  readonly received: ReceivedUpload[] = [];

  /** Answers the two upload paths; false for any other request. */
  async handle(req: FakeRequest, res: ServerResponse, fail: Fail): Promise<boolean> {
    if (req.method !== 'POST') return false;
    const path = req.path.endsWith('/images/edits')
      ? '/images/edits'
      : req.path.endsWith('/images/variations')
        ? '/images/variations'
        : undefined;
    if (!path) return false;
    if (!String(req.headers['content-type']).startsWith('multipart/form-data'))
      return (fail(400, 'Expected multipart/form-data.'), true);
    let form: FormData;
    try {
      form = await new Response(new Uint8Array(req.bytes), {
        headers: { 'content-type': String(req.headers['content-type']) },
      }).formData();
    } catch {
      return (fail(400, 'Could not parse multipart form.'), true);
    }
    const got: ReceivedUpload = { path, fields: {}, images: [] };
    for (const [field, v] of form.entries()) {
      if (typeof v === 'string') got.fields[field] = v;
      else {
        const file = { name: (v as File).name, type: v.type, bytes: Buffer.from(await v.arrayBuffer()) };
        if (field === 'mask') got.mask = file;
        else got.images.push({ field, ...file });
      }
    }
    this.received.push(got);
    const error = path === '/images/edits' ? this.checkEdit(got) : this.checkVariation(got);
    if (error) return (fail(400, error), true);
    const model = got.fields.model ?? 'dall-e-2';
    const gptImage = model.startsWith('gpt-image');
    const size = got.fields.size ?? (gptImage ? 'auto' : '1024x1024');
    const [w, h] = size === 'auto' ? [1024, 1024] : size.split('x').map(Number);
    const n = Number(got.fields.n ?? 1);
    // The result depends on the inputs, so a test can tell which images were sent.
    const seed = createHash('sha256')
      .update(got.fields.prompt ?? '')
      .update(Buffer.concat(got.images.map((i) => i.bytes)))
      .update(got.mask?.bytes ?? Buffer.alloc(0))
      .digest('hex');
    const pngs = Array.from({ length: n }, (_, i) => seededPng(w, h, `${seed}#${i}`));
    const asUrl = !gptImage && (got.fields.response_format ?? 'url') === 'url';
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        created: Math.floor(Date.now() / 1000),
        data: pngs.map((png, i) =>
          asUrl
            ? { url: `https://oaidalleapiprodscus.blob.core.windows.net/private/edit-${i}.png?sig=fake` }
            : { b64_json: png.toString('base64') }
        ),
        ...(gptImage
          ? {
              background: 'opaque',
              output_format: 'png',
              quality: got.fields.quality ?? 'auto',
              size,
              usage: { input_tokens: 300, output_tokens: 1056 * n, total_tokens: 300 + 1056 * n },
            }
          : {}),
      })
    );
    return true;
  }

  private common(got: ReceivedUpload, model: string): string | undefined {
    const n = got.fields.n ?? '1';
    if (!/^\d+$/.test(n) || Number(n) < 1 || Number(n) > 10)
      return "Invalid 'n': integer below minimum value or above maximum value of 10.";
    const size = got.fields.size;
    if (size && (SIZES[model] ? !SIZES[model].includes(size) : !/^(auto|\d+x\d+)$/.test(size)))
      return `Invalid value: '${size}'. Supported values are: ${(SIZES[model] ?? ['WxH']).join(', ')}.`;
    if (model.startsWith('gpt-image') && got.fields.response_format !== undefined)
      return "Unknown parameter: 'response_format'.";
    return undefined;
  }

  /** One square PNG under 4 MB, as DALL·E 2 takes it. */
  private static squarePng(got: ReceivedUpload): string | undefined {
    const dims = got.images.length === 1 ? pngSize(got.images[0].bytes) : undefined;
    if (!dims || dims[0] !== dims[1] || got.images[0].bytes.length >= MB4)
      return 'Invalid input image - must be one square PNG under 4 MB.';
    return undefined;
  }

  // Model ids the fake does not know (test catalogs) are taken like gpt-image models.
  private checkEdit(got: ReceivedUpload): string | undefined {
    const model = got.fields.model ?? 'dall-e-2';
    if (model === 'dall-e-3') return `Invalid value for 'model' = ${model}. Value must be 'dall-e-2' or 'gpt-image-1'.`;
    if (!got.fields.prompt) return "Missing required parameter: 'prompt'.";
    if (!got.images.length) return "Missing required parameter: 'image'.";
    const fields = new Set(got.images.map((i) => i.field));
    if (fields.size > 1 || (got.images.length > 1 && !fields.has('image[]')))
      return "Invalid 'image': send one 'image', or several as 'image[]'.";
    if (model === 'dall-e-2') {
      const wrong = OpenAiImageUploadFake.squarePng(got);
      if (wrong) return wrong;
      if (got.fields.prompt.length > 1000)
        return "Invalid 'prompt': string too long. Expected a string with maximum length 1000.";
    } else {
      if (got.images.length > 16) return "Invalid 'image': array too long. Expected an array with maximum length 16.";
      if (got.images.some((i) => !['image/png', 'image/jpeg', 'image/webp'].includes(imageType(i.bytes) ?? '')))
        return "Invalid file 'image': unsupported mimetype. Supported file formats are 'image/jpeg', 'image/png', and 'image/webp'.";
    }
    if (got.mask) {
      const m = pngSize(got.mask.bytes);
      const first = pngSize(got.images[0].bytes);
      if (!m) return "Invalid 'mask': must be a PNG.";
      if (first && (m[0] !== first[0] || m[1] !== first[1]))
        return 'Invalid mask: the mask and the image must have the same dimensions.';
    }
    return this.common(got, model);
  }

  private checkVariation(got: ReceivedUpload): string | undefined {
    const model = got.fields.model ?? 'dall-e-2';
    if (model === 'dall-e-3' || model.startsWith('gpt-image'))
      return `Invalid value for 'model' = ${model}. Value must be 'dall-e-2'.`;
    if (got.images.length !== 1 || got.images[0].field !== 'image') return "Missing required parameter: 'image'.";
    return OpenAiImageUploadFake.squarePng(got) ?? this.common(got, model);
  }
}
