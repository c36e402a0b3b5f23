import { gunzipSync } from 'node:zlib';
import type { FastifyRequest } from 'fastify';
import { apiError } from '../../core/kit/area.js';

// The bodies PostHog SDKs send, as JSON: plain, gzip (posthog-node; posthog-js with
// `compression=gzip-js`), or posthog-js's base64 form (`data=<base64 JSON>`,
// `compression=base64`, what it falls back to and what its flags call sends by default).

function gunzipped(raw: Buffer, max: number): Buffer {
  try {
    return gunzipSync(raw, { maxOutputLength: max });
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE')
      throw apiError('payload_too_large', `The body is over ${max} bytes once decompressed.`, {
        details: { max_bytes: max },
      });
    throw apiError('invalid_request', 'The body is not gzip.');
  }
}

function unbase64(text: string): string {
  const data = new URLSearchParams(text).get('data');
  if (data === null) throw apiError('invalid_request', 'The body is not JSON nor a data= form.');
  return Buffer.from(data, 'base64').toString('utf8');
}

/** The request's body (read as bytes) as JSON. */
export function decodeBody(req: FastifyRequest, max: number): any {
  const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  const q = req.query as Record<string, string | undefined>;
  const gzip =
    String(req.headers['content-encoding'] ?? '').includes('gzip')
    || q.compression === 'gzip-js'
    || q.compression === 'gzip'
    || (raw[0] === 0x1f && raw[1] === 0x8b);
  let text = (gzip ? gunzipped(raw, max) : raw).toString('utf8');
  if (!gzip && (q.compression === 'base64' || text.startsWith('data='))) text = unbase64(text);
  try {
    return JSON.parse(text);
  } catch {
    throw apiError('invalid_request', 'The body is not JSON.');
  }
}
