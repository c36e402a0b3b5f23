import { Type, type Static } from '@sinclair/typebox';

// The Scheduling area's wire, stated once.

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds.' });
export const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  examples: ['https://example.com/hooks/svc'],
  description: 'An http or https URL the gateway may call (see egress rules).',
});
const Payload = Type.Record(Type.String(), Type.Unknown(), { description: 'A JSON object, sent as the request body.' });
const IdempotencyKey = Type.Optional(Type.String({ minLength: 1, maxLength: 255 }));
export const QueueName = Type.String({
  pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}$',
  description: 'Letters, digits, _ . - (at most 80).',
});
// Names are tokens, values printable ASCII (a CR or LF would split the request); additional
// properties are refused so that the name pattern holds. Forbidden names: headers.ts.
const HeaderMap = Type.Record(
  Type.String({ pattern: '^[A-Za-z0-9-]{1,64}$' }),
  Type.String({
    maxLength: 1024,
    pattern: '^[\\t\\x20-\\x7E]*$',
    description: 'Printable ASCII and tabs: no CR, LF or other control characters.',
  }),
  {
    maxProperties: 20,
    additionalProperties: false,
    description:
      'Extra request headers. Not the ones the gateway sets (webhook-*, content-type, content-length, '
      + 'content-encoding, host, user-agent) nor hop-by-hop ones (connection, keep-alive, transfer-encoding, te, '
      + 'trailer, upgrade, expect, proxy-*).',
  }
);

export const IdParams = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 80 }) },
  { additionalProperties: false }
);
export const QueueParams = Type.Object({ queue: QueueName }, { additionalProperties: false });

// Webhooks
export const WebhookSendBody = Type.Object(
  {
    url: Url,
    payload: Payload,
    event_type: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'Sent as the `webhook-event-type` header.' })
    ),
    secret: Type.Optional(
      Type.String({ description: "A whsec_ secret to sign this delivery with instead of the account's." })
    ),
    max_attempts: Type.Optional(
      Type.Integer({ minimum: 1, description: 'At most the length of the retry schedule (default: all of it).' })
    ),
    headers: Type.Optional(HeaderMap),
    idempotency_key: IdempotencyKey,
  },
  { additionalProperties: false }
);
export type WebhookSendBodyT = Static<typeof WebhookSendBody>;

export const DeliveryState = Type.Union(['pending', 'retrying', 'delivered', 'failed'].map((s) => Type.Literal(s)));
export const DeliveryCreated = Type.Object({ delivery_id: Type.String(), state: DeliveryState });

export const Attempt = Type.Object({
  attempt: Type.Integer(),
  status: Type.Union([Type.Literal('started'), Type.Literal('succeeded'), Type.Literal('failed')], {
    description:
      'started: recorded before the call and its outcome not yet written: in flight, or its node died during it (the receiver may have had it; every attempt carries the same webhook-id).',
  }),
  response_code: Type.Union([Type.Integer(), Type.Null()]),
  duration_ms: Type.Integer(),
  error: Type.Optional(Type.String()),
  attempted_at: Timestamp,
});

export const Delivery = Type.Object({
  delivery_id: Type.String(),
  state: DeliveryState,
  url: Type.String(),
  event_type: Type.Optional(Type.String()),
  max_attempts: Type.Integer(),
  next_attempt_at: Type.Optional(Timestamp),
  attempts: Type.Array(Attempt),
  created_at: Timestamp,
});

export const SecretResult = Type.Object({
  secret: Type.String({ description: 'The current whsec_ signing secret.' }),
  created_at: Timestamp,
  previous_expires_at: Type.Optional(Timestamp),
});
export const RotateBody = Type.Object(
  {
    grace_seconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 604800,
        description: 'How long the old secret keeps signing (default from config, 24 h).',
      })
    ),
  },
  { additionalProperties: false }
);
export const RotateResult = Type.Object({
  secret: Type.String(),
  created_at: Timestamp,
  old_secret_expires_at: Timestamp,
});

// Cron
export const CronCreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    schedule: Type.String({
      minLength: 1,
      maxLength: 200,
      examples: ['*/5 * * * *'],
      description: 'A cron expression: 5 fields, or 6 with seconds first.',
    }),
    url: Url,
    payload: Type.Optional(Payload),
    timezone: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        default: 'UTC',
        description: 'IANA time zone the schedule is read in.',
      })
    ),
    retries: Type.Optional(Type.Integer({ minimum: 0, maximum: 20, default: 3 })),
    timeout_seconds: Type.Optional(Type.Integer({ minimum: 1, description: 'Per-run timeout (default 300).' })),
    enabled: Type.Optional(Type.Boolean({ default: true })),
    idempotency_key: IdempotencyKey,
  },
  { additionalProperties: false }
);
export type CronCreateBodyT = Static<typeof CronCreateBody>;

export const CronPatchBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    schedule: Type.Optional(Type.String({ minLength: 1, maxLength: 200, examples: ['*/5 * * * *'] })),
    url: Type.Optional(Url),
    payload: Type.Optional(Payload),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    retries: Type.Optional(Type.Integer({ minimum: 0, maximum: 20 })),
    timeout_seconds: Type.Optional(Type.Integer({ minimum: 1 })),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 }
);
export type CronPatchBodyT = Static<typeof CronPatchBody>;

export const CronRecord = Type.Object({
  cron_id: Type.String(),
  name: Type.String(),
  schedule: Type.String(),
  url: Type.String(),
  enabled: Type.Boolean(),
  next_run_at: Type.Optional(Timestamp),
  timezone: Type.String(),
  retries: Type.Integer(),
  timeout_seconds: Type.Integer(),
  payload: Type.Optional(Payload),
  last_run_at: Type.Optional(Timestamp),
  created_at: Timestamp,
});

export const CronRun = Type.Object({
  run_id: Type.String(),
  scheduled_for: Timestamp,
  state: Type.Union(
    ['running', 'retrying', 'succeeded', 'failed', 'missed'].map((s) => Type.Literal(s)),
    {
      description: 'missed: the slot was older than the catch-up window when its tick ran, so it did not run.',
    }
  ),
  missed_until: Type.Optional(
    Type.String({
      format: 'date-time',
      description: 'On a missed run: the first slot that was not skipped; every slot from scheduled_for up to it was.',
    })
  ),
  attempts: Type.Array(Attempt),
  created_at: Timestamp,
});

// Queue
export const PublishBody = Type.Object(
  {
    queue: QueueName,
    payload: Payload,
    delay_seconds: Type.Optional(
      Type.Number({ minimum: 0, description: 'Seconds before the message becomes visible.' })
    ),
    idempotency_key: IdempotencyKey,
  },
  { additionalProperties: false }
);
export type PublishBodyT = Static<typeof PublishBody>;

export const ReceiveBody = Type.Object(
  {
    max: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 1 })),
    visibility_timeout: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 43200, description: 'Seconds a received message stays hidden (default 30).' })
    ),
  },
  { additionalProperties: false }
);
export type ReceiveBodyT = Static<typeof ReceiveBody>;

export const ReceivedMessage = Type.Object({
  message_id: Type.String(),
  payload: Payload,
  receipt_handle: Type.String(),
  receive_count: Type.Integer(),
  published_at: Timestamp,
});

export const AckBody = Type.Object(
  {
    receipt_handles: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 100 }),
  },
  { additionalProperties: false }
);

export const DeadMessage = Type.Object({
  message_id: Type.String(),
  payload: Payload,
  receive_count: Type.Integer(),
  reason: Type.String(),
  published_at: Timestamp,
});

export const SubscribeBody = Type.Object({ url: Url }, { additionalProperties: false });
export const Subscription = Type.Object({
  subscription_id: Type.String(),
  queue: Type.String(),
  url: Type.String(),
  created_at: Timestamp,
});
