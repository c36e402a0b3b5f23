import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import type { Tap } from '../helpers/tap.js';

// A loopback remove.bg: POST /v1.0/removebg with `X-Api-Key` and a multipart `image_file` (or
// `image_file_b64`), `size`, `format`; answers the cut-out PNG with X-Width/X-Height and
// X-Credits-Charged, or remove.bg's error JSON `{errors:[{title, code}]}`.

export const REMOVE_BG_KEY = 'rbg-test-key-5f2c9a7e';

export interface RemoveBgRequest {
  apiKey?: string;
  contentType?: string;
  fields: Record<string, string>;
  imageBytes?: number;
}

/** The next answers the fake gives instead of a cut-out, as remove.bg words them. */
export const REMOVE_BG_ERRORS = {
  402: { title: 'Insufficient credits', code: 'insufficient_credits' },
  403: { title: 'Forbidden: API Key invalid', code: 'auth_failed' },
  429: { title: 'Rate limit exceeded', code: 'rate_limit_exceeded' },
  400: { title: 'Could not identify foreground in image.', code: 'unknown_foreground' },
  500: { title: 'Internal server error', code: 'internal_error' },
} as const;

/**
 * A cut-out as remove.bg returns one, made here by a colour key: pixels close to the top-left
 * corner's colour become transparent (the test images have a flat background).
 */
async function cutOut(input: Buffer): Promise<{ png: Buffer; width: number; height: number }> {
  const { data, info } = await sharp(input).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const [r, g, b] = [data[0], data[1], data[2]];
  for (let i = 0; i < data.length; i += 4) {
    if (Math.abs(data[i] - r) + Math.abs(data[i + 1] - g) + Math.abs(data[i + 2] - b) < 30) data[i + 3] = 0;
  }
  const png = await sharp(data, { raw: { width: info.width, height: info.height, channels: 4 } })
    .png()
    .toBuffer();
  return { png, width: info.width, height: info.height };
}

export async function removeBgFake(t: Tap) {
  const requests: RemoveBgRequest[] = [];
  const failures: Array<keyof typeof REMOVE_BG_ERRORS> = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const apiKey = req.headers['x-api-key'] as string | undefined;
    const seen: RemoveBgRequest = { apiKey, contentType: req.headers['content-type'], fields: {} };
    requests.push(seen);
    const error = (status: number, e: { title: string; code: string }) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ errors: [e] }));
    if (req.method !== 'POST' || req.url !== '/v1.0/removebg')
      return error(404, { title: 'Not found', code: 'not_found' });
    if (!apiKey) return error(403, { title: 'Missing API Key', code: 'auth_failed' });
    if (apiKey !== REMOVE_BG_KEY) return error(403, REMOVE_BG_ERRORS[403]);
    const status = failures.shift();
    if (status) {
      if (status === 429) res.setHeader('retry-after', '7');
      return error(status, REMOVE_BG_ERRORS[status]);
    }
    let image: Buffer | undefined;
    try {
      const form = await new Request('http://fake/', {
        method: 'POST',
        headers: { 'content-type': seen.contentType ?? '' },
        body,
      }).formData();
      for (const [name, value] of form.entries()) {
        if (typeof value === 'string') seen.fields[name] = name === 'image_file_b64' ? `${value.length} chars` : value;
        else if (name === 'image_file') image = Buffer.from(await value.arrayBuffer());
      }
      if (!image && form.get('image_file_b64')) image = Buffer.from(String(form.get('image_file_b64')), 'base64');
    } catch {
      return error(400, { title: 'Invalid multipart body', code: 'invalid_request' });
    }
    if (!image) return error(400, { title: 'No image given.', code: 'missing_source' });
    seen.imageBytes = image.length;
    const out = await cutOut(image).catch(() => undefined);
    if (!out) return error(400, { title: 'Failed to read the supplied image.', code: 'invalid_file' });
    res.writeHead(200, {
      'content-type': 'image/png',
      'x-width': String(out.width),
      'x-height': String(out.height),
      'x-credits-charged': '1',
      'x-type': 'other',
    });
    res.end(out.png);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1.0`;
  return { baseUrl, requests, failNext: (...s: Array<keyof typeof REMOVE_BG_ERRORS>) => failures.push(...s) };
}
