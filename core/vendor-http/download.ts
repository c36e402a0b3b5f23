import { VendorFailure } from '../router/failure.js';
import { sendFailure } from './http.js';

/**
 * The bytes at a URL a vendor's answer names (a finished video on its CDN), through the
 * instance's guarded fetch, with the content type it was served as (else `fallbackType`).
 */
export async function downloadAsset(
  fetchFn: typeof fetch,
  url: string,
  signal: AbortSignal,
  vendor: string,
  fallbackType: string
): Promise<{ data: Buffer; content_type: string }> {
  let res: Response;
  try {
    res = await fetchFn(url, { signal });
  } catch (e) {
    throw sendFailure(e, signal, vendor);
  }
  if (!res.ok) throw new VendorFailure('unavailable', `${vendor}: its output URL answered ${res.status}`);
  const type = res.headers.get('content-type')?.split(';')[0];
  const content_type = type && type !== 'application/octet-stream' ? type : fallbackType;
  return { data: Buffer.from(await res.arrayBuffer()), content_type };
}
