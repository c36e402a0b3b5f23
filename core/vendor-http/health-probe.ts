import type { VendorInstance } from '../vendor-api.js';
import { vendorFetch } from './http.js';

/**
 * The health check of a vendor's HTTP API: one authenticated GET that costs nothing (a model
 * list), which must answer 2xx. It goes through the context's fetch, not the adapter's pooled
 * client, and drops the body unread: the status is the answer. A failure is `{ ok: false }`
 * with the message `vendorFetch` gives it, never a throw.
 */
export function httpHealthProbe(
  fetchFn: typeof fetch,
  url: string,
  headers: (credentials?: Record<string, string>) => Record<string, string>,
  vendor: string
): NonNullable<VendorInstance['health']> {
  return async ({ signal, credentials }) => {
    try {
      const res = await vendorFetch(fetchFn, url, { method: 'GET', headers: headers(credentials), signal }, vendor);
      await res.body?.cancel();
      return { ok: true };
    } catch (e) {
      return { ok: false, error: (e as Error).message };
    }
  };
}
