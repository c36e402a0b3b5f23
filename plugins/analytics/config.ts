import { Type, type Static } from '@sinclair/typebox';

const CaptureRate = Type.Object(
  {
    rate_per_minute: Type.Number({ exclusiveMinimum: 0, description: 'Capture calls a minute, refilled evenly.' }),
    burst: Type.Integer({ minimum: 1, description: 'Calls at once on a full bucket.' }),
  },
  { additionalProperties: false }
);

/** `plugins.analytics` in the config file. */
export const AnalyticsConfig = Type.Object(
  {
    max_batch_events: Type.Integer({
      minimum: 1,
      maximum: 10_000,
      default: 1000,
      description: 'Events one track call (or one PostHog batch) may carry; one more is 413 and nothing is stored.',
    }),
    max_event_bytes: Type.Integer({
      minimum: 1024,
      maximum: 1_048_576,
      default: 65_536,
      description: "Bytes of one event's properties as JSON; over it the whole call is 413 and nothing is stored.",
    }),
    max_capture_bytes: Type.Integer({
      minimum: 65_536,
      maximum: 104_857_600,
      default: 20_971_520,
      description: 'Bytes of a PostHog capture body once decompressed (gzip); over it the call is 413.',
    }),
    price_per_1000_events_usd: Type.Number({
      minimum: 0,
      default: 0,
      description: 'Charged for stored events (duplicates are free), in the call that stores them; 0: free.',
    }),
    query_price_usd: Type.Number({
      minimum: 0,
      default: 0,
      description: 'Charged per funnel or cohort query that answers; 0: free.',
    }),
    query_timeout_seconds: Type.Integer({
      minimum: 1,
      maximum: 600,
      default: 60,
      description: 'A funnel or cohort query running longer is stopped.',
    }),
    query_threads: Type.Integer({
      minimum: 1,
      maximum: 16,
      default: 2,
      description: 'Funnel and cohort queries running at once (SQLite: worker threads; PostgreSQL: connections).',
    }),
    max_queued_queries: Type.Integer({
      minimum: 1,
      maximum: 1000,
      default: 10,
      description: 'Queries of one account waiting for a thread; one more is 429.',
    }),
    capture_rate_limits: Type.Record(Type.String(), CaptureRate, {
      default: { free: { rate_per_minute: 1200, burst: 600 }, pro: { rate_per_minute: 30_000, burst: 5000 } },
      description:
        'Per tier: capture calls (POST /v1/analytics/track and the PostHog capture paths) an account may make, '
        + 'in a bucket of their own; 429 with Retry-After above. A tier not listed: its API rate (tiers.<tier>).',
    }),
    retention_days: Type.Integer({
      minimum: 0,
      maximum: 3650,
      default: 400,
      description: 'Days an event is kept after its timestamp (retention job); 0 keeps them.',
    }),
  },
  { additionalProperties: false, default: {} }
);

export type AnalyticsConfigT = Static<typeof AnalyticsConfig>;
