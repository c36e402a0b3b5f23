import { Type, type Static } from '@sinclair/typebox';

export const TASKS = ['general', 'reasoning', 'coding', 'long_context'] as const;
export type Task = (typeof TASKS)[number];

/**
 * One model the gateway can route to. Prices are micro-USD per million tokens, so
 * `in: 150_000` is 0.15 USD per million input tokens. Operators add or override entries under
 * `plugins.ai.models` in the config with exactly this shape.
 */
export const ModelEntrySchema = Type.Object({
  id: Type.String({ minLength: 1, description: 'Model id as the vendor names it.' }),
  vendor: Type.String({ minLength: 1, description: 'Adapter name (`openai`, `anthropic`) or openai-compatible preset (`deepseek`).' }),
  family: Type.String({ minLength: 1 }),
  tasks: Type.Array(Type.Union(TASKS.map((t) => Type.Literal(t))), { minItems: 1, description: 'Tasks the model is fit for.' }),
  quality: Type.Integer({ minimum: 0, maximum: 100, description: 'Quality rank: higher is smarter.' }),
  context_window: Type.Integer({ minimum: 1 }),
  max_output: Type.Integer({ minimum: 1, default: 4096, description: 'Output cap reserved for when the caller gives no max_tokens.' }),
  price: Type.Object({
    in: Type.Integer({ minimum: 0 }),
    out: Type.Integer({ minimum: 0 }),
    batch_in: Type.Optional(Type.Integer({ minimum: 0 })),
    batch_out: Type.Optional(Type.Integer({ minimum: 0 })),
    per_million_chars: Type.Optional(Type.Integer({ minimum: 0, description: 'Speech synthesis (`tts`): micro-USD per million input characters.' })),
    per_minute: Type.Optional(Type.Integer({ minimum: 0, description: 'Transcription (`asr`): micro-USD per minute of audio.' })),
    image: Type.Optional(Type.Integer({ minimum: 0, description: 'Micro-USD per generated image (models with the `image` capability).' })),
  }, { additionalProperties: false }),
  capabilities: Type.Array(Type.Union([Type.Literal('chat'), Type.Literal('tools'), Type.Literal('vision'), Type.Literal('json'), Type.Literal('embed'), Type.Literal('tts'), Type.Literal('asr'), Type.Literal('image'), Type.Literal('image_edit'), Type.Literal('image_variation')]), { default: ['chat'] }),
  regions: Type.Array(Type.String(), { default: ['global'], description: '`global`, `western` or `china`.' }),
}, { additionalProperties: false });

export type ModelEntry = Static<typeof ModelEntrySchema>;

/** An openai-compatible preset: a known server speaking OpenAI's wire format. */
export interface Preset {
  base_url: string;
  regions: string[];
  /** Local servers take no key. */
  needs_key: boolean;
}
