import { Type, type Static } from '@sinclair/typebox';
import { IdempotencyKey } from '../../../core/kit/area.js';
import { MetadataSchema } from '../schemas.js';

const lit = <T extends string>(values: readonly T[], opts = {}) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    opts
  );

export const TtsBody = Type.Object(
  {
    input: Type.String({
      minLength: 1,
      maxLength: 4096,
      pattern: '\\S',
      description: 'Text to speak (at most 4,096 characters).',
    }),
    voice: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'Voice id of the vendor (OpenAI: alloy, ash, coral, echo, fable, nova, onyx, sage, shimmer…).',
      })
    ),
    format: Type.Optional(
      lit(['mp3', 'wav', 'ogg', 'pcm'] as const, {
        default: 'mp3',
        description: '`ogg` is Opus in Ogg; `pcm` is raw 24 kHz 16-bit little-endian mono.',
      })
    ),
    speed: Type.Optional(Type.Number({ minimum: 0.25, maximum: 4, description: 'Speaking rate; 1 is normal.' })),
    instructions: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 4096,
        description: 'How to speak (tone, accent), for models that take it.',
      })
    ),
    model: Type.Optional(Type.String({ minLength: 1 })),
    vendor: Type.Optional(Type.String({ minLength: 1 })),
    include_b64: Type.Optional(
      Type.Boolean({ default: false, description: 'Also return the audio inline as base64 (`b64`).' })
    ),
    idempotency_key: Type.Optional(IdempotencyKey),
  },
  { additionalProperties: false }
);
export type TtsBodyT = Static<typeof TtsBody>;

export const TtsResult = Type.Object({
  audio_url: Type.String({ description: 'Signed GET URL of the audio, valid until `url_expires_at`.' }),
  format: Type.String(),
  mime: Type.String(),
  bytes: Type.Integer(),
  url_expires_at: Type.String({ format: 'date-time' }),
  b64: Type.Optional(Type.String()),
  usage: Type.Object({ characters: Type.Integer() }),
  metadata: MetadataSchema,
});
export type TtsResultT = Static<typeof TtsResult>;

const AudioRef = Type.Union(
  [
    Type.Object(
      { url: Type.String({ minLength: 1, maxLength: 4096, examples: ['https://example.com/speech.mp3'] }) },
      { additionalProperties: false }
    ),
    Type.Object(
      {
        base64: Type.String({ minLength: 1, description: 'The audio, base64 (a `data:` URL is accepted too).' }),
        mime: Type.Optional(Type.String({ maxLength: 100 })),
      },
      { additionalProperties: false }
    ),
  ],
  { description: '`{ url }` (fetched through the guarded egress) or `{ base64, mime? }`.' }
);

export const AsrBody = Type.Object(
  {
    audio: AudioRef,
    language: Type.Optional(Type.String({ pattern: '^[a-z]{2,3}$', description: 'ISO-639-1 hint, such as `en`.' })),
    prompt: Type.Optional(
      Type.String({ maxLength: 2000, description: 'Context or spellings to guide the transcript.' })
    ),
    model: Type.Optional(Type.String({ minLength: 1 })),
    vendor: Type.Optional(Type.String({ minLength: 1 })),
    idempotency_key: Type.Optional(IdempotencyKey),
  },
  { additionalProperties: false }
);
export type AsrBodyT = Static<typeof AsrBody>;

export const SegmentSchema = Type.Object({ start: Type.Number(), end: Type.Number(), text: Type.String() });

export const AsrResult = Type.Object({
  text: Type.String(),
  language: Type.Union([Type.String(), Type.Null()], {
    description: "ISO-639-1 code: the vendor's detection, else the hint; null when neither.",
  }),
  segments: Type.Optional(Type.Array(SegmentSchema)),
  duration_seconds: Type.Number({ description: 'Seconds of audio billed.' }),
  metadata: MetadataSchema,
});
export type AsrResultT = Static<typeof AsrResult>;
