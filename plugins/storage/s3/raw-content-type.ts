import type { FastifyRequest } from 'fastify';

// S3 stores whatever Content-Type a PUT names, the empty one included (ceph's s3-tests send
// `Content-Type: ""` and expect the default type). Fastify, before any handler runs, refuses a
// body whose header it cannot parse as a media type (415), which the S3 endpoint could only
// answer as an internal error. Its bodies are raw streams and never parsed, so the header is
// put aside before Fastify looks (onRequest) and given back to the handler, which signs and
// stores it as it came.

const aside = new WeakMap<FastifyRequest, string | string[]>();

/** onRequest: take the Content-Type out of Fastify's sight. */
export async function putContentTypeAside(req: FastifyRequest): Promise<void> {
  const value = req.raw.headers['content-type'];
  if (value === undefined) return;
  aside.set(req, value);
  delete req.raw.headers['content-type'];
}

/** In the handler: the request's headers as the client sent them. */
export function giveContentTypeBack(req: FastifyRequest): void {
  const value = aside.get(req);
  if (value !== undefined) req.raw.headers['content-type'] = value as string;
}
