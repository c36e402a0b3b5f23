import { apiError, type ApiError } from '../errors.js';

/** What the caller asked for when no configured vendor could take the call. */
export interface NoVendorFor {
  capability: string;
  /** The instance or adapter the caller pinned, when the pin matched nothing. */
  vendor?: string;
  /** Instances configured for the capability, listed when a pin missed. */
  configured?: string[];
  model?: string;
  /** The account's region; `auto` names none. */
  region?: string;
  /** The request field to blame (`model`, `vendor`). */
  param?: string;
  /** Where the area documents its vendors; the configuration reference by default. */
  docs?: string;
  /** What to install or set for a local engine (Chromium for pdf.render), said before the config advice. */
  hint?: string;
}

/**
 * The one 503 no_vendor_available: what capability (and pin, model, region) found no vendor,
 * and how to add one: config `vendors:`, or, for AI capabilities, the caller's own key (BYOK).
 */
export function noVendor(f: NoVendorFor): ApiError {
  const how =
    `${f.hint ? `${f.hint} ` : ''}Add one under \`vendors:\` in the config file (see ${f.docs ?? 'docs/configuration.md'})`
    + `${f.capability.startsWith('ai.') ? ', or register your own key with POST /v1/byok' : ''}.`;
  if (f.vendor) {
    const configured = f.configured?.join(', ') || 'none';
    const message = `No vendor "${f.vendor}" serves ${f.capability}. Configured for it: ${configured}. ${how}`;
    return apiError('no_vendor_available', message, { param: f.param ?? 'vendor' });
  }
  const region = f.region && f.region !== 'auto' ? `region ${f.region}` : undefined;
  const what = [f.model && `model ${f.model}`, region].filter(Boolean).join(' in ');
  const message = `No vendor is configured for ${f.capability}${what ? ` with ${what}` : ''}. ${how}`;
  return apiError('no_vendor_available', message, { param: f.param, details: { capability: f.capability } });
}
