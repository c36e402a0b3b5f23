import { type Egress, isApiError } from '../../core/kit/area.js';
import { signedHeaders } from './signing.js';
import type { SchedulingConfigT } from './config.js';

export interface SignedPost {
  url: string;
  /** `webhook-id`: the same on every attempt, so receivers can de-duplicate. */
  msgId: string;
  body: string;
  secrets: string[];
  headers?: Record<string, string>;
  timeoutMs: number;
  signal?: AbortSignal;
  userAgent: string;
}

export interface AttemptOutcome {
  ok: boolean;
  responseCode: number | null;
  durationMs: number;
  error?: string;
  /** The receiver asked never to be called again for this message (410, or abort-message). */
  stop: boolean;
  /** The receiver's retry-after, in ms. */
  retryAfterMs?: number;
}

/** Seconds or an HTTP date, as RFC 9110 allows. */
export function parseRetryAfter(v: string | undefined, now = Date.now()): number | undefined {
  if (!v) return undefined;
  if (/^\d+$/.test(v.trim())) return Number(v.trim()) * 1000;
  const at = Date.parse(v);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

/**
 * One signed POST through the egress guard, classified the Standard Webhooks way: 2xx is
 * delivered, 3xx is a failure (redirects are not followed), 410 stops the retries, any other
 * status or a network error is retried.
 */
export async function postSigned(egress: Egress, p: SignedPost): Promise<AttemptOutcome> {
  const started = Date.now();
  const headers = {
    ...(p.headers ?? {}),
    'content-type': 'application/json',
    'user-agent': p.userAgent,
    ...signedHeaders(p.secrets, p.msgId, p.body, started),
  };
  try {
    const res = await egress.fetch(p.url, {
      method: 'POST',
      headers,
      body: p.body,
      timeoutMs: p.timeoutMs,
      maxBytes: 1 << 20,
      followRedirects: false,
      signal: p.signal,
    });
    const durationMs = Date.now() - started;
    const ok = res.status >= 200 && res.status < 300;
    const stop = res.status === 410 || res.headers['webhook-delivery'] === 'abort-message';
    let error: string | undefined;
    if (!ok)
      error =
        res.status >= 300 && res.status < 400
          ? `redirect ${res.status} is not followed`
          : `receiver answered ${res.status}`;
    return {
      ok,
      responseCode: res.status,
      durationMs,
      error,
      stop: !ok && stop,
      retryAfterMs: ok ? undefined : parseRetryAfter(res.headers['retry-after']),
    };
  } catch (e) {
    const error = isApiError(e) ? `${e.code}: ${e.message}` : ((e as Error)?.message ?? String(e));
    return { ok: false, responseCode: null, durationMs: Date.now() - started, error, stop: false };
  }
}

/** Delay before attempt n+1 after attempt n failed: the receiver's retry-after if it gave one, else the schedule. */
export function nextDelayMs(cfg: SchedulingConfigT, attempt: number, retryAfterMs?: number): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, cfg.max_retry_after_seconds * 1000);
  const s = cfg.retry_schedule_seconds;
  return s[Math.min(attempt, s.length - 1)] * 1000 * cfg.time_scale;
}
