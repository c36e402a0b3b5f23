import { Type, type Static } from '@sinclair/typebox';

const days = (dflt: number, what: string) =>
  Type.Integer({
    minimum: 0,
    maximum: 3650,
    default: dflt,
    description: `Days ${what} are kept (retention job); 0 keeps them.`,
  });

/** `plugins.observability` in the config file. */
export const ObservabilityConfig = Type.Object(
  {
    grouping_frames: Type.Integer({
      minimum: 1,
      maximum: 50,
      default: 5,
      description: "Top stack frames (innermost first) whose function, file and line make an error's fingerprint.",
    }),
    max_stack_bytes: Type.Integer({
      minimum: 1024,
      maximum: 1_048_576,
      default: 65_536,
      description: 'Longest `stack` an error may carry (POST /v1/observability/errors; 400 above).',
    }),
    max_envelope_bytes: Type.Integer({
      minimum: 65_536,
      maximum: 104_857_600,
      default: 1_048_576,
      description: 'Largest Sentry envelope, as sent and once decompressed (413 above).',
    }),
    max_event_properties_bytes: Type.Integer({
      minimum: 1024,
      maximum: 1_048_576,
      default: 32_768,
      description: 'Largest `properties` of an event, as JSON (413 above).',
    }),
    max_query_buckets: Type.Integer({
      minimum: 10,
      maximum: 100_000,
      default: 10_000,
      description: 'Most buckets ((to - from) / step) a metric query may ask for (400 above).',
    }),
    max_percentile_points: Type.Integer({
      minimum: 1000,
      maximum: 10_000_000,
      default: 200_000,
      description: 'Most points a p50/p95 query reads (422 above: narrow the range).',
    }),
    metric_query_threads: Type.Integer({
      minimum: 1,
      maximum: 64,
      default: 1,
      description: 'Metric queries running at once (SQLite: worker threads; PostgreSQL: connections).',
    }),
    metric_query_timeout_seconds: Type.Integer({
      minimum: 1,
      maximum: 3600,
      default: 30,
      description: 'A metric query running longer is stopped (422: narrow the range).',
    }),
    prometheus_window_seconds: Type.Integer({
      minimum: 10,
      maximum: 604_800,
      default: 3600,
      description: 'The Prometheus scrape shows series with a point this recent.',
    }),
    max_flags: Type.Integer({
      minimum: 1,
      maximum: 100_000,
      default: 1000,
      description: 'Most feature flags an account may have (409 above); all of them are kept in memory.',
    }),
    error_retention_days: days(30, 'error events, and issues not seen since,'),
    event_retention_days: days(30, 'custom events'),
    metric_retention_days: days(30, 'metric points'),
    flag_audit_retention_days: days(365, "flag changes' audit rows"),
  },
  { additionalProperties: false, default: {} }
);

export type ObservabilityConfigT = Static<typeof ObservabilityConfig>;
