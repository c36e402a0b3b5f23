import type { ServerResponse } from 'node:http';
import { describeImages, imageType, seededPng } from './images.js';

// OpenAI's image surfaces for the OpenAI fake: POST /images/generations, and image_url
// content parts in chat messages. Kept apart from openai-fake.ts so the chat fake stays small.

type Fail = (status: number, message: string) => void;

const SIZES: Record<string, string[]> = {
  'dall-e-2': ['256x256', '512x512', '1024x1024'],
  'dall-e-3': ['1024x1024', '1792x1024', '1024x1792'],
  'gpt-image-1': ['1024x1024', '1536x1024', '1024x1536', 'auto'],
};

/**
 * POST /images/generations: `{ created, data: [{ b64_json }] }` with real PNGs; DALL·E without
 * `response_format: b64_json` answers `{ url }` on OpenAI's blob host, as OpenAI does (not served here).
 */
export function imagesGenerations(body: any, res: ServerResponse, fail: Fail): void {
  const model: string = body?.model ?? 'dall-e-2';
  if (typeof body?.prompt !== 'string' || !body.prompt) return fail(400, "Missing required parameter: 'prompt'.");
  const n = body.n ?? 1;
  if (!Number.isInteger(n) || n < 1 || n > 10)
    return fail(400, `Invalid 'n': integer below minimum value or above maximum value of 10.`);
  if (model === 'dall-e-3' && n !== 1) return fail(400, 'You must provide n=1 for this model.');
  const gptImage = model.startsWith('gpt-image');
  if (gptImage && body.response_format !== undefined) return fail(400, "Unknown parameter: 'response_format'.");
  const size: string = body.size ?? (gptImage ? 'auto' : '1024x1024');
  if (SIZES[model] ? !SIZES[model].includes(size) : !/^(auto|\d+x\d+)$/.test(size))
    return fail(400, `Invalid value: '${size}'. Supported values are: ${(SIZES[model] ?? ['WxH']).join(', ')}.`);
  const [w, h] = size === 'auto' ? [1024, 1024] : size.split('x').map(Number);
  const pngs = Array.from({ length: n }, (_, i) => seededPng(w, h, `${body.prompt}#${i}`));
  const asUrl = !gptImage && (body.response_format ?? 'url') === 'url';
  const data = pngs.map((png, i) =>
    asUrl
      ? { url: `https://oaidalleapiprodscus.blob.core.windows.net/private/img-${i}.png?sig=fake` }
      : { b64_json: png.toString('base64') }
  );
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      created: Math.floor(Date.now() / 1000),
      data,
      ...(gptImage
        ? {
            background: 'opaque',
            output_format: 'png',
            quality: body.quality ?? 'auto',
            size,
            usage: { input_tokens: 10, output_tokens: 1056 * n, total_tokens: 10 + 1056 * n },
          }
        : {}),
    })
  );
}

/**
 * Checks image_url content parts as OpenAI does (a data: URL must hold an image of the type it
 * names) and returns what the fake "sees" in them; undefined when no message carries parts.
 * Calls `fail` and returns null when a part is bad.
 */
export function visionParts(messages: any[], fail: Fail): string | null | undefined {
  const seen: Array<{ mime: string; bytes: Buffer }> = [];
  let parts = false;
  for (const [mi, m] of messages.entries()) {
    if (!Array.isArray(m.content)) continue;
    parts = true;
    for (const [pi, p] of m.content.entries()) {
      if (p.type === 'text' && typeof p.text === 'string') continue;
      if (p.type !== 'image_url' || typeof p.image_url?.url !== 'string')
        return (fail(400, `Invalid content part at messages[${mi}].content[${pi}].`), null);
      const d = /^data:(image\/[a-z]+);base64,(.*)$/s.exec(p.image_url.url);
      if (!d)
        return (fail(400, `Invalid image URL at messages[${mi}].content[${pi}]: expected a base64 data URL.`), null);
      const bytes = Buffer.from(d[2], 'base64');
      if (imageType(bytes) !== d[1])
        return (fail(400, 'You uploaded an unsupported image. Please make sure your image is valid.'), null);
      seen.push({ mime: d[1], bytes });
    }
  }
  return parts ? describeImages(seen) : undefined;
}
