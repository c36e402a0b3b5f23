import {
  type Egress,
  apiError,
  PDF_MAX_INPUT_BYTES,
  type FetchedResource,
  type ResourceFetcher,
} from '../../core/kit/area.js';

/**
 * A caller's input (a PDF, a watermark image) fetched by the core's guarded egress (SSRF
 * rules, time and size caps), so no engine ever reaches a caller's URL. Whether it is a PDF
 * is the engine's to say (422).
 */
export async function fetchInput(egress: Egress, url: string, param: string, what = 'a PDF'): Promise<Buffer> {
  const res = await egress.fetch(url, { param, maxBytes: Math.min(egress.cfg.max_bytes, PDF_MAX_INPUT_BYTES) });
  if (res.status < 200 || res.status > 299)
    throw apiError('unprocessable', `${param} answered HTTP ${res.status}, not ${what}.`, {
      param,
      details: { status: res.status },
    });
  return res.body;
}

/**
 * The renderer's only way out: every request a page makes goes through the egress guard. A
 * refused address throws (that request fails; the page renders without it).
 */
export function resourceFetcher(egress: Egress, signal?: AbortSignal): ResourceFetcher {
  return async (url, init): Promise<FetchedResource> => {
    const res = await egress.fetch(url, {
      method: init.method,
      headers: init.headers,
      body: init.body,
      signal,
      param: 'resource',
      maxBytes: Math.min(egress.cfg.max_bytes, PDF_MAX_INPUT_BYTES),
    });
    return { status: res.status, headers: res.headers, body: res.body };
  };
}
