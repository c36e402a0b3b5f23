import { joinUrl, readJson, vendorFetch } from './http.js';

type Init = RequestInit & { signal: AbortSignal; headers?: Record<string, string> };

/**
 * A vendor's HTTP API behind a Bearer key: each call with the instance's key (or the caller's
 * own, BYOK, when given), the vendor's fixed headers, and its failures mapped to the router's kinds.
 */
export function bearerApi(
  fetchFn: typeof fetch,
  baseUrl: string,
  vendor: string,
  apiKey: string,
  fixed: Record<string, string> = {}
) {
  const call = (path: string, init: Init, credentials?: Record<string, string>) =>
    vendorFetch(
      fetchFn,
      joinUrl(baseUrl, path),
      {
        ...init,
        headers: { authorization: `Bearer ${credentials?.api_key ?? apiKey}`, ...fixed, ...init.headers },
      },
      vendor
    );
  return {
    call,
    json: async <T>(path: string, init: Init, credentials?: Record<string, string>) =>
      readJson<T>(await call(path, init, credentials), vendor),
  };
}
