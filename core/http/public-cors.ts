import type { FastifyReply, FastifyRequest } from 'fastify';

// Ingest and evaluation with an area's public key (a Sentry DSN's, PostHog's phc_ key, flags
// in a browser) are called from any page, as Sentry's and PostHog's are: any origin may,
// without credentials; the key in the request is what admits it.

const EXPOSED = 'retry-after, x-sentry-rate-limits, x-request-id, etag, ratelimit-remaining, ratelimit-reset';

export function allowAnyOrigin(reply: FastifyReply): void {
  reply.header('access-control-allow-origin', '*').header('access-control-expose-headers', EXPOSED);
}

/**
 * An onSend hook that allows any origin on every answer of a route, its errors included. Only
 * when the request names an origin: browsers always do on a cross-origin call, and a server's
 * call (most of a flag route's) is spared the headers.
 */
export function anyOriginOnSend(
  req: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (e: null, p: unknown) => void
) {
  if (req.headers.origin !== undefined) allowAnyOrigin(reply);
  done(null, payload);
}

/** 204 to a preflight from any origin, for the methods given and the headers it asks for. */
export function answerPreflight(req: FastifyRequest, reply: FastifyReply, methods: string): void {
  const asked = req.headers['access-control-request-headers'];
  reply
    .code(204)
    .header('access-control-allow-origin', '*')
    .header('access-control-allow-methods', methods)
    .header('access-control-allow-headers', typeof asked === 'string' && asked ? asked : 'content-type')
    .header('access-control-max-age', '86400')
    .header('vary', 'access-control-request-headers')
    .send();
}
