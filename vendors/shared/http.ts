import { VendorFailure, kindFromStatus, parseRetryAfter } from '../../core/router/failure.js';

const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * POST/GET JSON to a vendor and map every failure to the router's kinds: a request that never
 * left is `not_sent`, 429 is `rate_limited` with its retry-after, 529 (Anthropic overloaded)
 * and 5xx are `unavailable`, 401/403 `auth`, other 4xx `client_error`.
 */
export async function vendorFetch(fetchFn: typeof fetch, url: string, init: RequestInit & { signal: AbortSignal }, vendor: string): Promise<Response> {
  let res: Response;
  try {
    res = await fetchFn(url, init);
  } catch (e) {
    if (init.signal.aborted) throw init.signal.reason ?? e;
    const code = (e as { cause?: { code?: string } }).cause?.code;
    if (code && NOT_SENT.has(code)) throw new VendorFailure('not_sent', `${vendor}: cannot connect (${code})`, { cause: e });
    throw new VendorFailure('unavailable', `${vendor}: ${(e as Error).message}`, { cause: e });
  }
  if (res.ok) return res;
  const text = await res.text().catch(() => '');
  const kind = res.status === 529 ? 'unavailable' : kindFromStatus(res.status);
  throw new VendorFailure(kind, `${vendor} answered ${res.status}: ${errorMessage(text)}`, {
    status: res.status, retryAfterMs: parseRetryAfter(res.headers.get('retry-after')),
  });
}

/** The message inside OpenAI's `{error:{message}}` or Anthropic's `{type:"error",error:{message}}`. */
export function errorMessage(text: string): string {
  try {
    const j = JSON.parse(text) as { error?: { message?: string } | string; message?: string };
    if (typeof j.error === 'string') return j.error.slice(0, 300);
    return (j.error?.message ?? j.message ?? text).slice(0, 300);
  } catch {
    return text.slice(0, 300) || 'no body';
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
