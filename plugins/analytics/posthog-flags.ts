import type { FastifyInstance } from 'fastify';
import {
  allowAnyOrigin,
  answerPreflight,
  apiError,
  type FlagAnswer,
  type FlagFailure,
  type Svc,
} from '../../core/kit/area.js';
import type { AnalyticsConfigT } from './config.js';
import { takeCapture } from './capture-limit.js';
import { decodeBody } from './posthog-body.js';
import type { PosthogKeys } from './posthog-keys.js';

// PostHog's flags call (wire-facts "PostHog capture and flags") answered from the account's
// feature flags, the ones GET /v1/observability/flags/{key} evaluates: posthog-node's
// getFeatureFlag, isFeatureEnabled and getAllFlags post `{token, distinct_id,
// person_properties, flag_keys_to_evaluate?}` to /flags/?v=2; posthog-js to /flags/?v=2
// (base64 form by default); older SDKs to /decide/?v=3|4. One answer serves them all: v2's
// `flags` map beside the older `featureFlags` / `featureFlagPayloads`. The flags live in the
// observability area, reached through the core's `flags` service, never imported.

const PATHS: Record<string, string> = { '/flags': 'analytics.posthog_flags', '/decide': 'analytics.posthog_decide' };

// OpenFeature's reasons as PostHog's reason codes.
const CODES: Record<string, string> = {
  STATIC: 'condition_match',
  TARGETING_MATCH: 'condition_match',
  SPLIT: 'condition_match',
  DEFAULT: 'no_condition_match',
  DISABLED: 'flag_disabled',
  // PostHog's reason for a flag it could not evaluate (its wire, not one of the gateway's error codes).
  ERROR: 'error',
};

/**
 * A flag as PostHog shows it: a boolean flag is on or off with no variant; another type, while
 * on, is the variant's name, with the variant's value as the payload (JSON text).
 */
function posthogFlag(a: FlagAnswer | FlagFailure) {
  if ('error' in a)
    return {
      key: a.key,
      enabled: false,
      variant: null,
      failed: true,
      reason: { code: CODES.ERROR, description: a.message },
      metadata: {},
    };
  const multi = a.type !== 'boolean' && a.enabled;
  return {
    key: a.key,
    enabled: a.enabled,
    variant: multi ? a.variant : null,
    reason: { code: CODES[a.reason] ?? 'unknown', description: a.reason },
    metadata: multi ? { payload: JSON.stringify(a.value) } : {},
  };
}

function stringList(v: unknown): string[] | undefined {
  return Array.isArray(v) && v.every((x) => typeof x === 'string') ? v : undefined;
}

export function registerPosthogFlags(app: FastifyInstance, svc: Svc, cfg: AnalyticsConfigT, keys: PosthogKeys) {
  for (const [path, operation] of Object.entries(PATHS)) {
    const url = `/v1/analytics/posthog${path}`;
    app.options(
      url,
      {
        config: { auth: 'none', cors: false },
        schema: { summary: 'CORS preflight of the PostHog flags call: any origin', tags: ['analytics'] },
      },
      (req, reply) => answerPreflight(req, reply, 'POST, OPTIONS')
    );
    app.post(
      url,
      {
        config: {
          auth: 'none',
          cors: false,
          operation,
          errors: ['unauthenticated', 'forbidden', 'rate_limited', 'not_found'],
        },
        schema: {
          summary: "PostHog's flags call (posthog-node, posthog-js): the account's feature flags for a distinct_id",
          tags: ['analytics'],
        },
      },
      async (req, reply) => {
        allowAnyOrigin(reply);
        const body = decodeBody(req, cfg.max_capture_bytes) ?? {};
        const acct = await keys.admit(body.token ?? body.api_key, 'token');
        await takeCapture(svc, cfg, acct.accountId, acct.tier, 'flags');
        const flags = svc.services.get('flags');
        if (!flags) throw apiError('not_found', 'Feature flags live in the observability area, which is off here.');
        const distinct = typeof body.distinct_id === 'string' && body.distinct_id ? body.distinct_id : undefined;
        const props =
          body.person_properties && typeof body.person_properties === 'object' ? body.person_properties : {};
        const ctx = { ...props, ...(distinct ? { distinct_id: distinct } : {}) };
        const answers = await flags.evaluateAll(acct.accountId, ctx, distinct, stringList(body.flag_keys_to_evaluate));
        const out = answers.map(posthogFlag);
        const featureFlags: Record<string, string | boolean> = {};
        const featureFlagPayloads: Record<string, string> = {};
        for (const f of out) {
          if (f.failed) continue;
          featureFlags[f.key] = f.variant ?? f.enabled;
          if (f.metadata.payload !== undefined) featureFlagPayloads[f.key] = f.metadata.payload;
        }
        return {
          flags: Object.fromEntries(out.map((f) => [f.key, f])),
          featureFlags,
          featureFlagPayloads,
          errorsWhileComputingFlags: out.some((f) => f.failed),
          requestId: req.id,
        };
      }
    );
  }
}
