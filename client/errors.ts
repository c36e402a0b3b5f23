/**
 * Every failure the client reports: an error body from the gateway (the conventions' shape),
 * a response that is not one (a proxy's HTML page), or no response at all.
 */
export class SvcError extends Error {
  /** The gateway's error code (`insufficient_balance`), or `network_error` / `http_error` for failures outside it. */
  readonly code: string;
  /** HTTP status; 0 when no response arrived. */
  readonly status: number;
  readonly requestId?: string;
  readonly param?: string;
  readonly details: Record<string, unknown>;
  /** Seconds from `retry-after`, when the gateway sent it (429, 409 idempotency_in_progress). */
  readonly retryAfter?: number;

  constructor(init: {
    code: string;
    status: number;
    message: string;
    requestId?: string;
    param?: string;
    details?: Record<string, unknown>;
    retryAfter?: number;
    cause?: unknown;
  }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'SvcError';
    this.code = init.code;
    this.status = init.status;
    this.requestId = init.requestId;
    this.param = init.param;
    this.details = init.details ?? {};
    this.retryAfter = init.retryAfter;
  }
}

interface ErrorBody {
  error?: {
    code?: unknown;
    message?: unknown;
    status?: unknown;
    request_id?: unknown;
    param?: unknown;
    details?: unknown;
  };
}

/** Build the SvcError for a non-2xx response from its (already read) text. */
export function errorFromResponse(
  res: { status: number; statusText: string; headers: Headers },
  text: string
): SvcError {
  const requestId = res.headers.get('x-request-id') ?? undefined;
  const ra = Number(res.headers.get('retry-after'));
  const retryAfter = Number.isFinite(ra) && res.headers.has('retry-after') ? ra : undefined;
  let body: ErrorBody | undefined;
  try {
    body = JSON.parse(text) as ErrorBody;
  } catch {
    body = undefined;
  }
  const e = body?.error;
  if (e && typeof e === 'object' && typeof e.code === 'string') {
    return new SvcError({
      code: e.code,
      status: typeof e.status === 'number' ? e.status : res.status,
      message: typeof e.message === 'string' ? e.message : e.code,
      requestId: typeof e.request_id === 'string' ? e.request_id : requestId,
      param: typeof e.param === 'string' ? e.param : undefined,
      details: e.details && typeof e.details === 'object' ? (e.details as Record<string, unknown>) : {},
      retryAfter,
    });
  }
  const snippet = text.replace(/\s+/g, ' ').trim().slice(0, 200);
  return new SvcError({
    code: 'http_error',
    status: res.status,
    message: `HTTP ${res.status} ${res.statusText}${snippet ? `: ${snippet}` : ''}`,
    requestId,
    retryAfter,
  });
}
