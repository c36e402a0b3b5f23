import { Type, type Static } from '@sinclair/typebox';

/** `plugins.scheduling` in the config file. */
export const SchedulingConfig = Type.Object(
  {
    retry_schedule_seconds: Type.Array(Type.Number({ minimum: 0 }), {
      minItems: 1,
      maxItems: 30,
      default: [0, 5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400],
      description:
        'Delay before each attempt of a webhook, push message or cron run (the Standard Webhooks schedule); its length is the default number of attempts.',
    }),
    time_scale: Type.Number({
      exclusiveMinimum: 0,
      maximum: 1,
      default: 1,
      description: 'Multiplies the retry schedule; tests compress it (0.001 turns 5 s into 5 ms).',
    }),
    max_retry_after_seconds: Type.Integer({
      minimum: 0,
      default: 86400,
      description: "A receiver's retry-after is honoured up to this long.",
    }),
    delivery_timeout_seconds: Type.Number({
      minimum: 0.1,
      maximum: 300,
      default: 15,
      description: 'Time a webhook or push receiver has to answer.',
    }),
    secret_grace_seconds: Type.Integer({
      minimum: 0,
      default: 86400,
      description: 'After a rotation the old secret keeps signing alongside the new one this long.',
    }),
    max_payload_bytes: Type.Integer({
      minimum: 16,
      default: 262144,
      description: 'Cap on a webhook, cron or queue payload (JSON bytes).',
    }),
    concurrency: Type.Integer({
      minimum: 1,
      default: 64,
      description: 'Deliveries (webhooks, cron runs, pushes) a node makes at once, per kind.',
    }),
    max_event_endpoints: Type.Integer({
      minimum: 1,
      maximum: 1000,
      default: 20,
      description: 'Event endpoints (POST /v1/events/endpoints) an account may have.',
    }),
    cron_catch_up_seconds: Type.Optional(
      Type.Integer({
        minimum: 1,
        description:
          "How late a cron slot may still run (Kubernetes' startingDeadlineSeconds); older slots are recorded as missed. Default: the job's period, at least 60 s.",
      })
    ),
    cron_default_timeout_seconds: Type.Integer({ minimum: 1, default: 300 }),
    cron_max_timeout_seconds: Type.Integer({ minimum: 1, default: 900 }),
    queue_max_receives: Type.Integer({
      minimum: 1,
      default: 5,
      description: 'A pulled message received this often without an ack moves to the dead-letter list.',
    }),
    queue_visibility_timeout_seconds: Type.Integer({ minimum: 1, default: 30 }),
    queue_max_delay_seconds: Type.Integer({
      minimum: 0,
      default: 1209600,
      description: 'Longest delay_seconds a publish may ask for (default 14 days).',
    }),
  },
  { additionalProperties: false, default: {} }
);

export type SchedulingConfigT = Static<typeof SchedulingConfig>;
