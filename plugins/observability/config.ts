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
    error_retention_days: days(30, 'error events, and issues not seen since,'),
  },
  { additionalProperties: false, default: {} }
);

export type ObservabilityConfigT = Static<typeof ObservabilityConfig>;
