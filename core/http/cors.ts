import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import type { CoreConfig } from '../../config/schema.js';

/**
 * An origin pattern as S3's CORS rules write them (and `server.cors.origins` too): an exact
 * origin (`https://app.example.com`), or one with a single `*` standing for any run of
 * characters (`https://*.example.com`, `*`). Compared as written: browsers send origins in
 * lower case, so patterns are written in lower case.
 */
export function wildcardPattern(pattern: string): (origin: string) => boolean {
  const star = pattern.indexOf('*');
  if (star < 0) return (origin) => origin === pattern;
  const head = pattern.slice(0, star);
  const tail = pattern.slice(star + 1);
  return (origin) => origin.length >= head.length + tail.length && origin.startsWith(head) && origin.endsWith(tail);
}

/** Whether any of the patterns admits the origin. */
export function originMatcher(patterns: readonly string[]): (origin: string) => boolean {
  const tests = patterns.map(wildcardPattern);
  return (origin) => tests.some((t) => t(origin));
}

// Response headers of the API a browser page may read: without this list a page sees only
// the CORS-safelisted ones (content-type and a few more), not the request id it should quote
// nor what a call cost.
export const API_EXPOSED_HEADERS = [
  'x-request-id',
  'x-svc-cost-usd',
  'x-svc-balance-usd',
  'x-svc-vendor',
  'x-svc-latency-ms',
  'idempotent-replayed',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'ratelimit-policy',
  'retry-after',
  'location',
  'x-should-retry',
];

export const API_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * CORS for the API, for the origins the operator lists in `server.cors.origins` and no other:
 * with none (the default) nothing is registered and browsers on other origins cannot read any
 * answer, since those carry the caller's key. Requests from an origin not listed get no CORS
 * headers, and their preflights fall through to the usual 404/405 answer. The gateway's keys
 * travel in headers, never cookies, so credentials are never allowed.
 *
 * Routes that do their own CORS (the S3 endpoint) set `config: { cors: false }`. Must be
 * registered after the hook that sets x-request-id (preflights are answered in this hook)
 * and before the route-method tracker, which must not see the catch-all OPTIONS route.
 */
export async function installApiCors(app: FastifyInstance, config: CoreConfig['server']['cors']): Promise<void> {
  if (!config.origins.length) return;
  const allowed = originMatcher(config.origins);
  await app.register(cors, {
    origin: (origin, cb) => cb(null, origin !== undefined && allowed(origin) ? origin : false),
    methods: API_METHODS,
    // allowedHeaders unset: the plugin echoes what the preflight asks for (authorization,
    // idempotency-key, content-type…). The origin is the operator's to trust.
    exposedHeaders: API_EXPOSED_HEADERS,
    maxAge: config.max_age_seconds,
    credentials: false,
    // A preflight without access-control-request-method is answered like any other; the
    // plugin's strict mode would send a plain-text 400 outside the conventions' error shape.
    strictPreflight: false,
  });
}
