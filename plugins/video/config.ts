import { Type, type Static } from '@sinclair/typebox';

/** `plugins.video` in the config file. */
export const VideoConfig = Type.Object(
  {
    default_duration_seconds: Type.Integer({
      minimum: 1,
      maximum: 60,
      default: 5,
      description: 'Clip length when the caller gives no duration_seconds.',
    }),
    default_aspect: Type.Union([Type.Literal('16:9'), Type.Literal('9:16'), Type.Literal('1:1')], {
      default: '16:9',
      description: 'Aspect when the caller gives none.',
    }),
    poll_ms: Type.Integer({
      minimum: 10,
      default: 5000,
      description:
        "Delay before a job's first poll of its vendor; each later poll waits 1.5× longer, up to max_poll_ms.",
    }),
    max_poll_ms: Type.Integer({ minimum: 10, default: 60000, description: 'Longest wait between two polls.' }),
    submit_timeout_seconds: Type.Number({
      exclusiveMinimum: 0,
      maximum: 600,
      default: 60,
      description:
        "How long a vendor may take to answer a job's submit; past it the job fails (the vendor may have it).",
    }),
    timeout_minutes: Type.Integer({
      minimum: 1,
      default: 120,
      description:
        'A job not done this long after its submit fails (its reservation released, the vendor asked to stop).',
    }),
    max_reference_image_mib: Type.Integer({
      minimum: 1,
      maximum: 50,
      default: 10,
      description: 'Largest reference_image_url the gateway fetches (413 above).',
    }),
    retention_days: Type.Integer({
      minimum: 0,
      default: 30,
      description:
        'Finished jobs are deleted this many days after they end; 0 keeps them (their videos follow the result store).',
    }),
  },
  { additionalProperties: false, default: {} }
);

export type VideoConfigT = Static<typeof VideoConfig>;
