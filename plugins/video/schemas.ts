import { Type, type Static } from '@sinclair/typebox';
import {
  IdempotencyKey,
  ListQuery,
  VIDEO_ASPECTS,
  VIDEO_MAX_SECONDS,
  VIDEO_MIN_SECONDS,
  VIDEO_PREFERENCES,
  VIDEO_RESOLUTIONS,
} from '../../core/kit/area.js';
import { VIDEO_STATES } from './store.js';

// The video wire, the single source of validation, serialization, OpenAPI and discovery.

const literals = <T extends string>(values: readonly T[], description: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    { description }
  );

export const GenerateBody = Type.Object(
  {
    prompt: Type.String({ minLength: 1, maxLength: 4000, description: 'What the video shows.' }),
    reference_image_url: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        format: 'uri',
        description: 'An image to start from (fetched by the gateway, http(s) only).',
      })
    ),
    duration_seconds: Type.Optional(
      Type.Number({
        minimum: VIDEO_MIN_SECONDS,
        maximum: VIDEO_MAX_SECONDS,
        description: 'Clip length, 1 to 60 s; a vendor rounds up to the next length its model makes.',
      })
    ),
    aspect: Type.Optional(literals(VIDEO_ASPECTS, 'Frame shape.')),
    resolution: Type.Optional(
      literals(VIDEO_RESOLUTIONS, 'Default 720p; a vendor that does not make it is not offered (422 when none is).')
    ),
    prefer: Type.Optional(literals(VIDEO_PREFERENCES, 'How to choose among vendors; default balanced.')),
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Ask for this model.' })),
    vendor: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Pin one configured vendor.' })),
    idempotency_key: Type.Optional(IdempotencyKey),
  },
  {
    additionalProperties: false,
    examples: [{ prompt: 'A paper boat on a rainy street', duration_seconds: 5, aspect: '16:9' }],
  }
);
export type GenerateBodyT = Static<typeof GenerateBody>;

export const VideoStateSchema = literals(
  VIDEO_STATES,
  'queued → running → succeeded | failed; queued or running → canceled by POST /v1/video/jobs/{id}/cancel.'
);

export const VideoJob = Type.Object({
  job_id: Type.String(),
  state: VideoStateSchema,
  video_url: Type.Optional(Type.String({ description: 'The MP4, in the result store (a signed URL).' })),
  thumbnail_url: Type.Optional(Type.String({ description: 'A still of it, when the vendor or engine made one.' })),
  error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
  vendor: Type.Optional(Type.String()),
  model: Type.Optional(Type.String()),
  placeholder: Type.Optional(
    Type.Boolean({ description: 'True for a local-render placeholder (a title card and pan), not a generated video.' })
  ),
  duration_seconds: Type.Number(),
  cost_usd: Type.Number({ description: 'Charged once the job succeeded; 0 before and when it did not.' }),
  created_at: Type.String(),
  completed_at: Type.Union([Type.String(), Type.Null()]),
});
export type VideoJobT = Static<typeof VideoJob>;

export const JobParams = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 80 }) },
  { additionalProperties: false }
);

export const JobListQuery = Type.Object(
  { ...ListQuery.properties, state: Type.Optional(VideoStateSchema) },
  { additionalProperties: false }
);
export type JobListQueryT = Static<typeof JobListQuery>;

export const CancelBody = Type.Object(
  { idempotency_key: Type.Optional(IdempotencyKey) },
  { additionalProperties: false }
);

export const CancelResult = Type.Object({ ok: Type.Boolean() });
