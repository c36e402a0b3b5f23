import { VendorFailure, kindFromStatus, notSentCode, parseRetryAfter } from '../router/failure.js';

/**
 * POST/GET JSON to a vendor and map every failure to the router's kinds: a request that never
 * left is `not_sent`, 429 is `rate_limited` with its retry-after, 529 (Anthropic overloaded)
 * and 5xx are `unavailable`, 401/403 `auth`, other 4xx `client_error`; or, for a vendor whose
 * error body says more than its status (whether it took the request), as its own `failure` reads it.
 */
export async function vendorFetch(
  fetchFn: typeof fetch,
  url: string,
  init: RequestInit & { signal: AbortSignal },
  vendor: string,
  failure?: (status: number, text: string, retryAfter: string | null) => VendorFailure
): Promise<Response> {
  let res: Response;
  try {
    res = await fetchFn(url, init);
  } catch (e) {
    throw sendFailure(e, init.signal, vendor);
  }
  if (res.ok) return res;
  const text = await res.text().catch(() => '');
  const retryAfter = res.headers.get('retry-after');
  throw failure ? failure(res.status, text, retryAfter) : statusFailure(vendor, res.status, text, retryAfter);
}

/** A request that failed before any answer: the caller's abort as it is, else `not_sent` or `unavailable`. */
export function sendFailure(e: unknown, signal: AbortSignal, vendor: string): unknown {
  if (signal.aborted) return signal.reason ?? e;
  const code = notSentCode(e);
  if (code) return new VendorFailure('not_sent', `${vendor}: cannot connect (${code})`, { cause: e });
  return new VendorFailure('unavailable', `${vendor}: ${(e as Error).message}`, { cause: e });
}

/** A vendor's non-2xx answer as the router's failure kind, with its message and retry-after. */
export function statusFailure(
  vendor: string,
  status: number,
  text: string,
  retryAfter: string | null | undefined
): VendorFailure {
  const kind = status === 529 ? 'unavailable' : kindFromStatus(status);
  return new VendorFailure(kind, `${vendor} answered ${status}: ${errorMessage(text)}`, {
    status,
    retryAfterMs: parseRetryAfter(retryAfter),
  });
}

// Kept generous: the router scrubs secrets from this text before it cuts it to an excerpt
// (core/router/scrub.ts), and a cut made first could leave half a secret no scrubber knows.
const MESSAGE_CHARS = 4096;

/** The message inside OpenAI's `{error:{message}}` or Anthropic's `{type:"error",error:{message}}`. */
export function errorMessage(text: string): string {
  try {
    const j = JSON.parse(text) as { error?: { message?: string } | string; message?: string };
    if (typeof j.error === 'string') return j.error.slice(0, MESSAGE_CHARS);
    return (j.error?.message ?? j.message ?? text).slice(0, MESSAGE_CHARS);
  } catch {
    return text.slice(0, MESSAGE_CHARS) || 'no body';
  }
}

export async function readJson<T>(res: Response, vendor: string): Promise<T> {
  const text = await res.text();
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new VendorFailure('unavailable', `${vendor} sent a body that is not JSON`);
  }
}

export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}${path}`;
}
