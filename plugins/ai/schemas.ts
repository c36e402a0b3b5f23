import { Type, type Static } from '@sinclair/typebox';
import { IdempotencyKey, TASKS } from '../../core/kit/area.js';

const lit = <T extends string>(values: readonly T[], opts = {}) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    opts
  );

export const ToolCallSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  arguments: Type.String({ description: 'JSON text.' }),
});

export const ChatMessageSchema = Type.Object(
  {
    role: lit(['system', 'user', 'assistant', 'tool'] as const),
    content: Type.Union([Type.String(), Type.Null()]),
    tool_calls: Type.Optional(Type.Array(ToolCallSchema)),
    tool_call_id: Type.Optional(Type.String()),
  },
  { additionalProperties: false }
);

export const ToolSchema = Type.Object(
  {
    type: Type.Literal('function'),
    function: Type.Object(
      {
        name: Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-zA-Z0-9_-]+$' }),
        description: Type.Optional(Type.String()),
        parameters: Type.Optional(
          Type.Record(Type.String(), Type.Unknown(), { description: 'JSON Schema of the arguments.' })
        ),
      },
      { additionalProperties: false }
    ),
  },
  { additionalProperties: false }
);

export const ResponseFormatSchema = Type.Object(
  {
    type: lit(['text', 'json_object', 'json_schema'] as const),
    json_schema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false }
);

export const ChatBody = Type.Object(
  {
    messages: Type.Union(
      [Type.String({ minLength: 1 }), Type.Array(ChatMessageSchema, { minItems: 1, maxItems: 2000 })],
      { description: 'A prompt string or a list of ChatMessage.' }
    ),
    model: Type.Optional(Type.String({ minLength: 1, description: 'Pins a model; skips routing by task and prefer.' })),
    vendor: Type.Optional(Type.String({ minLength: 1, description: 'Pins a vendor instance or adapter.' })),
    task: Type.Optional(lit(TASKS, { default: 'general' })),
    prefer: Type.Optional(lit(['balanced', 'cheapest', 'smartest'] as const, { default: 'balanced' })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    max_tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    tools: Type.Optional(Type.Array(ToolSchema, { maxItems: 128 })),
    response_format: Type.Optional(ResponseFormatSchema),
    cache_strategy: Type.Optional(lit(['vendor', 'service', 'none'] as const, { default: 'vendor' })),
    batch_mode: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'Run later at the batch price: 202 `{ batch_id, state }`, then GET /v1/ai/batches/{id}. Not with `stream`.',
      })
    ),
    max_cost_multiplier: Type.Optional(Type.Number({ minimum: 1, maximum: 100, default: 1.5 })),
    timeout_seconds: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 600 })),
    stream: Type.Optional(Type.Boolean({ default: false })),
    idempotency_key: Type.Optional(IdempotencyKey),
  },
  { additionalProperties: false }
);
export type ChatBodyT = Static<typeof ChatBody>;

const AttemptSchema = Type.Object({
  vendor: Type.String(),
  model: Type.Optional(Type.String()),
  status: Type.String(),
  latency_ms: Type.Integer(),
  error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
});

export const MetadataSchema = Type.Object({
  vendor: Type.String(),
  model: Type.String(),
  latency_ms: Type.Integer(),
  cost_usd: Type.Number(),
  cached: Type.Boolean(),
  byok: Type.Boolean(),
  attempts: Type.Array(AttemptSchema),
});

export const UsageSchema = Type.Object({
  input_tokens: Type.Integer(),
  output_tokens: Type.Integer(),
  total_tokens: Type.Integer(),
});

export const ChatResult = Type.Object({
  content: Type.Union([Type.String(), Type.Null()]),
  finish_reason: Type.String(),
  tool_calls: Type.Optional(Type.Array(ToolCallSchema)),
  usage: UsageSchema,
  metadata: MetadataSchema,
});
export type ChatResultT = Static<typeof ChatResult>;

/** One SSE event of a streamed chat; the last has finish_reason, usage and metadata. */
export const ChatStreamChunk = Type.Object({
  delta: Type.String(),
  finish_reason: Type.Union([Type.String(), Type.Null()]),
  index: Type.Integer(),
  tool_calls: Type.Optional(
    Type.Array(
      Type.Object({
        index: Type.Integer(),
        id: Type.Optional(Type.String()),
        name: Type.Optional(Type.String()),
        arguments: Type.Optional(Type.String()),
      })
    )
  ),
  usage: Type.Optional(UsageSchema),
  metadata: Type.Optional(MetadataSchema),
});
export type ChatStreamChunkT = Static<typeof ChatStreamChunk>;

export const EmbedBody = Type.Object(
  {
    input: Type.Union([
      Type.String({ minLength: 1 }),
      Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 2048 }),
    ]),
    model: Type.Optional(Type.String({ minLength: 1 })),
    vendor: Type.Optional(Type.String({ minLength: 1 })),
    dimensions: Type.Optional(Type.Integer({ minimum: 1, maximum: 8192 })),
    idempotency_key: Type.Optional(IdempotencyKey),
  },
  { additionalProperties: false }
);
export type EmbedBodyT = Static<typeof EmbedBody>;

export const EmbedResult = Type.Object({
  embeddings: Type.Array(Type.Array(Type.Number())),
  model: Type.String(),
  usage: Type.Object({ input_tokens: Type.Integer(), total_tokens: Type.Integer() }),
  metadata: MetadataSchema,
});
