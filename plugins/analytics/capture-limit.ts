import { apiError, type Svc } from '../../core/kit/area.js';
import type { AnalyticsConfigT } from './config.js';

// Capture calls (track, PostHog's capture paths) are counted per account in a bucket of their
// own, as the Sentry envelopes are: a page's events never spend the API calls' budget, and a
// runaway page is stopped with 429 + Retry-After, which PostHog's SDKs back off on.

/** One call from the account's bucket of `kind` (capture calls; PostHog flags calls have one too). */
export async function takeCapture(
  svc: Svc,
  cfg: AnalyticsConfigT,
  accountId: string,
  tierName: string,
  kind: 'capture' | 'flags' = 'capture'
) {
  const rate =
    cfg.capture_rate_limits[tierName] ?? svc.config.tiers[tierName] ?? svc.config.tiers[svc.config.default_tier];
  const d = await svc.rateLimits.take(`analytics-${kind}:${accountId}`, rate);
  if (!d.allowed)
    throw apiError(
      'rate_limited',
      `Over the ${tierName} tier's ${kind} rate of ${rate.rate_per_minute} calls a minute (burst ${rate.burst}).`
        + ` Retry in ${d.retryAfterSeconds} s.`,
      { headers: { 'retry-after': String(d.retryAfterSeconds) } }
    );
}
