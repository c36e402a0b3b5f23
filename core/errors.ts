// Every error code the gateway can answer with, its HTTP status and what it means.
// This is the only place codes are declared: routes throw `apiError(code, ...)`, the error
// handler renders the conventions' body, and docs/errors.md is checked against this table
// by test/docs/errors-doc.test.ts.

export const ERRORS = {
  invalid_request: {
    status: 400,
    retryable: false,
    meaning: 'The request is malformed: bad JSON, a wrong content type, or two sources where one is allowed.',
  },
  validation_failed: {
    status: 400,
    retryable: false,
    meaning:
      'One or more fields are missing, of the wrong type, out of range or unknown; `details.errors` lists every one.',
  },
  unauthenticated: {
    status: 401,
    retryable: false,
    meaning: 'The key or token is missing, unknown, revoked or expired.',
  },
  insufficient_balance: {
    status: 402,
    retryable: false,
    meaning: 'The wallet cannot cover what this call reserves. Top up with POST /v1/account/topup.',
  },
  forbidden: { status: 403, retryable: false, meaning: "The key's scopes do not allow this call." },
  domain_not_verified: {
    status: 403,
    retryable: false,
    meaning: 'The `from` address is on a domain that has not been verified.',
  },
  region_not_allowed: {
    status: 403,
    retryable: false,
    meaning: "The pinned vendor does not serve the account's region.",
  },
  not_found: {
    status: 404,
    retryable: false,
    meaning: 'No such resource in this account (resources of other accounts are never revealed).',
  },
  method_not_allowed: { status: 405, retryable: false, meaning: 'The path exists but not with this HTTP method.' },
  conflict: { status: 409, retryable: false, meaning: 'The request conflicts with the current state of the resource.' },
  idempotency_key_reused: {
    status: 409,
    retryable: false,
    meaning: 'The idempotency key was used before with a different request body.',
  },
  idempotency_in_progress: {
    status: 409,
    retryable: true,
    meaning: 'A request with this idempotency key is still being processed.',
  },
  invalid_state: {
    status: 409,
    retryable: false,
    meaning: 'The resource is in a state that does not allow this move.',
  },
  already_exists: { status: 409, retryable: false, meaning: 'A resource with this name already exists.' },
  payload_too_large: {
    status: 413,
    retryable: false,
    meaning: 'The body or a part of it is over a size or count cap; the message names the cap.',
  },
  uri_too_long: {
    status: 414,
    retryable: false,
    meaning: 'A path segment is longer than the router accepts; the message names the cap.',
  },
  unsupported_media_type: {
    status: 415,
    retryable: false,
    meaning: 'The request content type is not accepted by this endpoint.',
  },
  unprocessable: { status: 422, retryable: false, meaning: 'The request is well-formed but cannot be carried out.' },
  rate_limited: {
    status: 429,
    retryable: true,
    meaning: "Over the tier's request rate; wait for `retry-after` seconds.",
  },
  internal_error: {
    status: 500,
    retryable: true,
    meaning: 'A bug in the gateway. The log has the details; the response does not.',
  },
  vendor_error: {
    status: 502,
    retryable: true,
    meaning: 'Every candidate vendor failed; `details.attempts` lists vendor, status and latency.',
  },
  no_vendor_available: {
    status: 503,
    retryable: false,
    meaning: 'No vendor is configured or healthy for this capability; the message says how to add one.',
  },
  vendor_timeout: { status: 504, retryable: true, meaning: 'The vendor did not answer in time.' },
  fetch_failed: {
    status: 502,
    retryable: true,
    meaning: 'A URL the gateway fetched for the call could not be reached (connection refused, reset, TLS).',
  },
  fetch_timeout: {
    status: 504,
    retryable: true,
    meaning: 'A URL the gateway fetched for the call did not answer within the time cap.',
  },
  otp_attempts_exceeded: {
    status: 429,
    retryable: false,
    meaning: 'Too many wrong codes for this one-time passcode: it is locked until it expires; request a new one then.',
  },
  tunnel_not_connected: {
    status: 502,
    retryable: true,
    meaning: 'The public URL exists but no tunnel client is connected to it right now (or it closed mid-request).',
  },
  origin_not_allowed: {
    status: 403,
    retryable: false,
    meaning: "The page's origin is not among the captcha site key's allowed hostnames.",
  },
} as const satisfies Record<string, { status: number; retryable: boolean; meaning: string }>;

export type ErrorCode = keyof typeof ERRORS;

/**
 * Codes of an outcome recorded on a resource rather than of a failed request: a BYOK key's
 * `test_result.error.code` (in a 200 answer or recorded when a live call was refused), and the
 * `error.code` of an email or SMS record that was not sent.
 */
export const CHECK_CODES = {
  vendor_rejected: 'The vendor refused the credentials, on the test or on a live call; the key is marked `invalid`.',
  vendor_unreachable: 'The vendor could not be reached (or did not answer in time) to test the credentials.',
  not_sent: 'A message no vendor took, after every send attempt the area allows; it is `failed` and not charged.',
  outcome_unknown:
    'The gateway stopped between calling a vendor that does not de-duplicate and recording its answer: the message is `failed`, not charged, and never sent again (it may or may not have gone out).',
  suppressed: "Every recipient of the email is on the account's suppression list: recorded, not sent, not charged.",
} as const satisfies Record<string, string>;

export type CheckCode = keyof typeof CHECK_CODES;

export interface ApiErrorOptions {
  param?: string;
  details?: Record<string, unknown>;
  headers?: Record<string, string>;
}

/**
 * Marks an ApiError whichever copy of this module made it. The CLI runs a bundle of the gateway
 * (scripts/bundle-cli.mjs) while a third-party plugin imports `svc-gateway` from dist/, so the two
 * hold different ApiError classes: `instanceof` reads the mark instead of the prototype chain.
 */
const API_ERROR = Symbol.for('svc-gateway.ApiError');

export class ApiError extends Error {
  static override [Symbol.hasInstance](e: unknown): boolean {
    return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[API_ERROR] === true;
  }

  readonly [API_ERROR] = true;
  readonly code: ErrorCode;
  readonly status: number;
  readonly param?: string;
  readonly details: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message?: string, opts: ApiErrorOptions = {}) {
    super(message ?? ERRORS[code].meaning);
    this.name = 'ApiError';
    this.code = code;
    this.status = ERRORS[code].status;
    this.param = opts.param;
    this.details = opts.details ?? {};
    this.headers = opts.headers ?? {};
  }
}

export function apiError(code: ErrorCode, message?: string, opts?: ApiErrorOptions): ApiError {
  return new ApiError(code, message, opts);
}

/**
 * 400 validation_failed naming one field, shaped like the schema validator's: `details.errors`
 * holds the field and the reason, which the message repeats (`<param> <reason>.`) unless given.
 */
export function fieldError(param: string, reason: string, message = `${param} ${reason}.`): ApiError {
  return new ApiError('validation_failed', message, { param, details: { errors: [{ param, message: reason }] } });
}

export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError;
}

/** The conventions' error body. */
export function errorBody(e: ApiError, requestId: string) {
  const error: Record<string, unknown> = { code: e.code, message: e.message, status: e.status, request_id: requestId };
  if (e.param !== undefined) error.param = e.param;
  error.details = e.details;
  return { error };
}
