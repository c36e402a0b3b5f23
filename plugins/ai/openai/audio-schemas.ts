import { Type, type Static } from '@sinclair/typebox';

// OpenAI's audio request shapes, loose like the chat ones: unknown fields are accepted and ignored.

export const OA_SPEECH_FORMATS = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const;

export const OaSpeechBody = Type.Object(
  {
    model: Type.String({
      minLength: 1,
      description: 'A catalog tts model (tts-1, gpt-4o-mini-tts…), or `auto`, `cheapest`, `smartest`.',
    }),
    input: Type.String({ minLength: 1, maxLength: 4096 }),
    voice: Type.String({ minLength: 1, maxLength: 64 }),
    response_format: Type.Optional(
      Type.Union(
        OA_SPEECH_FORMATS.map((f) => Type.Literal(f)),
        { default: 'mp3' }
      )
    ),
    speed: Type.Optional(Type.Number({ minimum: 0.25, maximum: 4 })),
    instructions: Type.Optional(Type.String({ maxLength: 4096 })),
    stream_format: Type.Optional(
      Type.Literal('audio', { description: 'Only whole audio files; `sse` is not served.' })
    ),
  },
  { additionalProperties: true }
);
export type OaSpeechBodyT = Static<typeof OaSpeechBody>;

export const OA_TRANSCRIPT_FORMATS = ['json', 'text', 'verbose_json', 'srt', 'vtt'] as const;
export type OaTranscriptFormat = (typeof OA_TRANSCRIPT_FORMATS)[number];
