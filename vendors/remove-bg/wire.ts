import { VendorFailure, parseRetryAfter } from '../../core/kit/vendor.js';

// remove.bg's wire format (https://www.remove.bg/api): POST /removebg, `X-Api-Key`, multipart
// `image_file` (or `image_file_b64`), `size`, `format`; the answer is the image's bytes, with
// `X-Width`/`X-Height`; an error is JSON `{errors:[{title, code}]}`.

interface RemoveBgErrors {
  errors?: Array<{ title?: string; code?: string; detail?: string }>;
}

/** The first error's title and code, never the request (so never the key). */
function errorText(text: string): string {
  try {
    const first = (JSON.parse(text) as RemoveBgErrors).errors?.[0];
    if (first?.title) return first.code ? `${first.title} (${first.code})` : first.title;
  } catch {
    /* not JSON: a proxy's page; its start says enough */
  }
  return text.slice(0, 200) || 'no body';
}

/**
 * remove.bg's statuses as the router's kinds: 402 is the account out of credits (quota: another
 * remover may serve), 401/403 the key, 429 the rate limit with its Retry-After, 400 the image
 * (no foreground, unreadable: no other remover does better), 5xx unavailable.
 */
export function removeBgFailure(status: number, text: string, retryAfter: string | null): VendorFailure {
  const message = `remove-bg answered ${status}: ${errorText(text)}`;
  if (status === 402) return new VendorFailure('quota', message, { status });
  if (status === 401 || status === 403) return new VendorFailure('auth', message, { status });
  if (status === 429)
    return new VendorFailure('rate_limited', message, { status, retryAfterMs: parseRetryAfter(retryAfter) });
  // The caller's image is wrong: 422, as the embedded engine answers for one it cannot read.
  if (status >= 400 && status < 500) return new VendorFailure('client_error', message, { status: 422 });
  return new VendorFailure('unavailable', message, { status });
}

/** Width and height from a PNG's IHDR chunk, for an answer without X-Width/X-Height. */
export function pngSize(data: Buffer): { width: number; height: number } | undefined {
  const PNG = '89504e470d0a1a0a';
  if (data.length < 24 || data.subarray(0, 8).toString('hex') !== PNG) return undefined;
  return { width: data.readUInt32BE(16), height: data.readUInt32BE(20) };
}
