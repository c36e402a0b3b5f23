import { Type, type Static } from '@sinclair/typebox';

// The AI catalog's row: what a vendor declares about each model it serves (tasks, quality,
// limits, prices, regions). Vendors declare their rows (`defineVendor({ models })`), the
// operator adds or overrides rows under `plugins.ai.models`, and the AI area ranks and prices
// calls by them. Both sides import this file, so it lives below both.

export const TASKS = ['general', 'reasoning', 'coding', 'long_context'] as const;
export type Task = (typeof TASKS)[number];

const KINDS = [
  'chat',
  'tools',
  'vision',
  'json',
  'embed',
  'tts',
  'asr',
  'image',
  'image_edit',
  'image_variation',
] as const;

/**
 * One model the gateway can route to. Prices are micro-USD per million tokens, so
 * `in: 150_000` is 0.15 USD per million input tokens. Operators add or override entries under
 * `plugins.ai.models` in the config with exactly this shape.
 */
export const ModelEntrySchema = Type.Object(
  {
    id: Type.String({ minLength: 1, description: 'Model id as the vendor names it.' }),
    vendor: Type.String({
      minLength: 1,
      description: 'Adapter name (`openai`, `anthropic`) or openai-compatible preset (`deepseek`).',
    }),
    family: Type.String({ minLength: 1 }),
    tasks: Type.Array(Type.Union(TASKS.map((t) => Type.Literal(t))), {
      minItems: 1,
      description: 'Tasks the model is fit for.',
    }),
    quality: Type.Integer({ minimum: 0, maximum: 100, description: 'Quality rank: higher is smarter.' }),
    context_window: Type.Integer({ minimum: 1 }),
    max_output: Type.Integer({
      minimum: 1,
      default: 4096,
      description: 'Output cap reserved for when the caller gives no max_tokens.',
    }),
    price: Type.Object(
      {
        in: Type.Integer({ minimum: 0 }),
        out: Type.Integer({ minimum: 0 }),
        batch_in: Type.Optional(Type.Integer({ minimum: 0 })),
        batch_out: Type.Optional(Type.Integer({ minimum: 0 })),
        per_million_chars: Type.Optional(
          Type.Integer({
            minimum: 0,
            description: 'Speech synthesis (`tts`): micro-USD per million input characters.',
          })
        ),
        per_minute: Type.Optional(
          Type.Integer({
            minimum: 0,
            description: 'Transcription (`asr`): micro-USD per minute of audio.',
          })
        ),
        image: Type.Optional(
          Type.Integer({
            minimum: 0,
            description: 'Micro-USD per generated image (models with the `image` capability).',
          })
        ),
      },
      { additionalProperties: false }
    ),
    capabilities: Type.Array(Type.Union(KINDS.map((k) => Type.Literal(k))), { default: ['chat'] }),
    regions: Type.Array(Type.String(), { default: ['global'], description: '`global`, `western` or `china`.' }),
  },
  { additionalProperties: false }
);

export type ModelEntry = Static<typeof ModelEntrySchema>;

/** What a catalog row is for: chat models, embedding models, speech synthesis, transcription. */
export type ModelKind = ModelEntry['capabilities'][number];

/**
 * A known server an adapter can be pointed at by name (`preset: deepseek` of
 * openai-compatible): its address, regions and models. Its rows' `vendor` is the preset's name.
 */
export interface Preset {
  base_url: string;
  regions: string[];
  /** Local servers take no key. */
  needs_key: boolean;
  models: ModelEntry[];
}

/** USD as vendors list prices, to the catalog's integer micro-USD. */
export function usdMicros(usd: number): number {
  return Math.round(usd * 1_000_000);
}
