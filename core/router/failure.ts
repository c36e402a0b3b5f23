// The small set of failure kinds the router decides on, whatever the vendor.
export type FailureKind =
  | 'rate_limited' // try another vendor; cool this one down (retry-after when given)
  | 'timeout' // the vendor may have acted: only idempotent capabilities fail over
  | 'unavailable' // 5xx, connection reset after sending
  | 'quota' // the vendor account is out of credit
  | 'auth' // the vendor rejected our credentials
  | 'client_error' // the request itself is wrong: no other vendor will do better
  | 'not_sent'; // the request never left (connection refused, DNS): always safe to fail over

export const FAILURE_KINDS: FailureKind[] = [
  'rate_limited',
  'timeout',
  'unavailable',
  'quota',
  'auth',
  'client_error',
  'not_sent',
];

export class VendorFailure extends Error {
  readonly kind: FailureKind;
  readonly status?: number;
  readonly retryAfterMs?: number;
  /**
   * The vendor's own code when it refuses the message's recipient for good (a number that does
   * not exist or opted out): no resend or other vendor can help. An area may end such a send in
   * its own state (core/outbox `states.refused`).
   */
  readonly recipientRefused?: string;
  constructor(
    kind: FailureKind,
    message: string,
    opts: { status?: number; retryAfterMs?: number; cause?: unknown; recipientRefused?: string } = {}
  ) {
    super(message, { cause: opts.cause });
    this.name = 'VendorFailure';
    this.kind = kind;
    this.status = opts.status;
    this.retryAfterMs = opts.retryAfterMs;
    if (opts.recipientRefused !== undefined) this.recipientRefused = opts.recipientRefused;
  }
}

/** The vendor's code of a refused recipient (VendorFailure `recipientRefused`, of any copy of this module). */
export function recipientRefusedOf(err: unknown): string | undefined {
  const code = (err as { recipientRefused?: unknown } | null)?.recipientRefused;
  return typeof code === 'string' && code ? code : undefined;
}

const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  // The egress rules refused the address at connect (core/egress): nothing was sent.
  'EEGRESSREFUSED',
]);

/**
 * The socket error code of a request that never left (connection refused, DNS), else undefined.
 * fetch wraps the socket error in `cause`; undici's own request throws it as it is.
 */
export function notSentCode(err: unknown): string | undefined {
  const e = err as { code?: string; cause?: { code?: string } } | null | undefined;
  const code = e?.code ?? e?.cause?.code;
  return code && NOT_SENT_CODES.has(code) ? code : undefined;
}

/** Generic classification for errors an adapter did not classify itself. */
export function classifyGeneric(err: unknown): FailureKind {
  if (err instanceof VendorFailure) return err.kind;
  const e = err as { name?: string; code?: string; cause?: { code?: string }; status?: number; kind?: string };
  // A VendorFailure from another copy of this module (a plugin's own dependency) fails instanceof.
  if (e?.name === 'VendorFailure' && FAILURE_KINDS.includes(e.kind as FailureKind)) return e.kind as FailureKind;
  if (notSentCode(e)) return 'not_sent';
  const code = e?.code ?? e?.cause?.code;
  if (
    e?.name === 'TimeoutError'
    || e?.name === 'AbortError'
    || code === 'UND_ERR_HEADERS_TIMEOUT'
    || code === 'UND_ERR_BODY_TIMEOUT'
  )
    return 'timeout';
  if (typeof e?.status === 'number') return kindFromStatus(e.status);
  return 'unavailable';
}

/**
 * The gateway's own exception, not anything the vendor did: a bug or a value JSON cannot hold
 * (TypeError, RangeError, ReferenceError) thrown by code, with no cause from a socket. fetch's
 * own "fetch failed" TypeError always carries its socket error as `cause`, so it is not one.
 * Such a failure must not cool the vendor down for every tenant nor send the call elsewhere.
 */
export function isGatewayFault(err: unknown): boolean {
  if (!(err instanceof TypeError || err instanceof RangeError || err instanceof ReferenceError)) return false;
  return err.cause === undefined;
}

/** HTTP status to failure kind, for adapters of HTTP APIs. */
export function kindFromStatus(status: number): FailureKind {
  if (status === 429) return 'rate_limited';
  if (status === 401 || status === 403) return 'auth';
  if (status === 402) return 'quota';
  if (status === 408 || status === 504) return 'timeout';
  if (status >= 500) return 'unavailable';
  return 'client_error';
}

/** How long the vendor asked us to wait, from any error that carries `retryAfterMs`. */
export function retryAfterOf(err: unknown): number | undefined {
  const ms = (err as { retryAfterMs?: unknown } | null)?.retryAfterMs;
  return typeof ms === 'number' && Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}

/** Parse a Retry-After header (seconds or HTTP date) into ms. */
export function parseRetryAfter(v: string | null | undefined): number | undefined {
  if (!v) return undefined;
  const s = Number(v);
  if (Number.isFinite(s)) return Math.max(0, s * 1000);
  const d = Date.parse(v);
  return Number.isFinite(d) ? Math.max(0, d - Date.now()) : undefined;
}
