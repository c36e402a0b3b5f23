import { ERRORS, type ErrorCode } from '../errors.js';
import type { RouteEntry } from './route-registry.js';

export interface RouteError {
  code: ErrorCode;
  status: number;
  retryable: boolean;
  meaning: string;
}

/**
 * The error codes a route can answer with, derived from what the core does to it, so that
 * discovery and the OpenAPI responses say the same thing and stay right as routes change:
 * - every route validates its input (validation_failed); a body can also be malformed
 *   (invalid_request), too large (payload_too_large) or not JSON (unsupported_media_type);
 *   a path id can be unknown (not_found);
 * - key routes authenticate, check scopes and spend the rate bucket;
 * - admin routes check the operator key;
 * - billed routes and routes that call a vendor reserve from the wallet;
 * - routes with a capability go through the router (no vendor, vendor failure, timeout);
 * - idempotent routes can hit a reused or running key;
 * - and whatever the route adds in `config.errors`.
 */
export function routeErrorCodes(route: RouteEntry): ErrorCode[] {
  const { config, schema } = route;
  const codes = new Set<ErrorCode>(['validation_failed']);
  if (schema.body) {
    codes.add('invalid_request');
    codes.add('payload_too_large');
    codes.add('unsupported_media_type');
  }
  if (schema.params || route.url.includes(':')) codes.add('not_found');
  if (route.auth === 'key') {
    codes.add('unauthenticated');
    codes.add('forbidden');
    codes.add('rate_limited');
  }
  if (route.auth === 'admin') codes.add('unauthenticated');
  if (config.billing || config.capability) codes.add('insufficient_balance');
  if (config.capability) {
    codes.add('no_vendor_available');
    codes.add('vendor_error');
    codes.add('vendor_timeout');
  }
  if (config.idempotent) {
    codes.add('idempotency_key_reused');
    codes.add('idempotency_in_progress');
  }
  for (const c of config.errors ?? []) codes.add(c);
  // Ordered by status, then as declared in core/errors.ts, so the output is stable.
  const order = Object.keys(ERRORS) as ErrorCode[];
  return [...codes].sort((a, b) => ERRORS[a].status - ERRORS[b].status || order.indexOf(a) - order.indexOf(b));
}

export function routeErrors(route: RouteEntry): RouteError[] {
  return routeErrorCodes(route).map((code) => ({
    code,
    status: ERRORS[code].status,
    retryable: ERRORS[code].retryable,
    meaning: ERRORS[code].meaning,
  }));
}
