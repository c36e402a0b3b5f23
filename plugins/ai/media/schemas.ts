import { Type, type Static } from '@sinclair/typebox';
import { IdempotencyKey } from '../../../core/kit/area.js';
import { MetadataSchema } from '../schemas.js';
import { IMAGE_MIMES } from './image-input.js';

const lit = <T extends string>(values: readonly T[], opts = {}) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    opts
  );

/** ImageRef: a URL the gateway fetches (egress rules apply), or the bytes as base64; exactly one of the two. */
export const ImageRefSchema = Type.Object(
  {
    url: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 8192,
        description: 'http(s) URL the gateway fetches under its egress rules.',
      })
    ),
    base64: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'The image bytes, base64 (a `data:image/...;base64,` prefix is accepted).',
      })
    ),
    mime: Type.Optional(lit(IMAGE_MIMES, { description: 'Checked against the bytes when given.' })),
  },
  { additionalProperties: false, description: 'Exactly one of `url` or `base64`.' }
);
export type ImageRefT = Static<typeof ImageRefSchema>;

export const VisionBody = Type.Object(
  {
    prompt: Type.String({ minLength: 1, maxLength: 200_000, description: 'What to ask about the images.' }),
    images: Type.Array(ImageRefSchema, { minItems: 1, maxItems: 16 }),
    model: Type.Optional(Type.String({ minLength: 1, description: 'Pins a vision-capable model.' })),
    vendor: Type.Optional(Type.String({ minLength: 1, description: 'Pins a vendor instance or adapter.' })),
    max_tokens: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1_000_000,
        description: "Output cap; the model's cap (at most plugins.ai.default_max_tokens) when absent.",
      })
    ),
  },
  { additionalProperties: false }
);
export type VisionBodyT = Static<typeof VisionBody>;

export const IMAGE_SIZE = '^(auto|[1-9][0-9]{1,4}x[1-9][0-9]{1,4})$';

export const ImageBody = Type.Object(
  {
    prompt: Type.String({ minLength: 1, maxLength: 32_000 }),
    size: Type.Optional(
      Type.String({
        pattern: IMAGE_SIZE,
        description: "`WIDTHxHEIGHT` (e.g. `1024x1024`) or `auto`; the sizes a model takes are the vendor's.",
      })
    ),
    n: Type.Optional(Type.Integer({ minimum: 1, maximum: 10, default: 1, description: 'How many images.' })),
    model: Type.Optional(Type.String({ minLength: 1 })),
    vendor: Type.Optional(Type.String({ minLength: 1 })),
    prefer: Type.Optional(lit(['balanced', 'cheapest', 'smartest'] as const, { default: 'balanced' })),
    response_format: Type.Optional(
      lit(['url', 'b64_json'] as const, {
        default: 'url',
        description: "`b64_json` adds each image's bytes as `b64` next to its `url`.",
      })
    ),
    idempotency_key: Type.Optional(IdempotencyKey),
  },
  { additionalProperties: false }
);
export type ImageBodyT = Static<typeof ImageBody>;

export const ImageEditBody = Type.Object(
  {
    ...ImageBody.properties,
    images: Type.Array(ImageRefSchema, {
      minItems: 1,
      maxItems: 16,
      description:
        'PNG, JPEG or WebP: the image to edit, or several references for models that take them (gpt-image-1).',
    }),
    mask: Type.Optional(
      Type.Object(ImageRefSchema.properties, {
        additionalProperties: false,
        description: 'A PNG (at most 4 MiB) whose transparent pixels mark where the first image is edited.',
      })
    ),
  },
  { additionalProperties: false }
);
export type ImageEditBodyT = Static<typeof ImageEditBody>;

const { prompt: _prompt, ...imageOptions } = ImageBody.properties;

export const ImageVariationBody = Type.Object(
  {
    ...imageOptions,
    image: Type.Object(ImageRefSchema.properties, {
      additionalProperties: false,
      description: 'The image to vary: PNG, JPEG or WebP (DALL·E 2 takes a square PNG under 4 MB).',
    }),
  },
  { additionalProperties: false }
);
export type ImageVariationBodyT = Static<typeof ImageVariationBody>;

export const ImageResult = Type.Object({
  images: Type.Array(
    Type.Object({
      url: Type.String({ description: 'Signed URL of the saved image (kept for the result retention period).' }),
      b64: Type.Optional(
        Type.String({ description: 'The image bytes, base64; only with `response_format: b64_json`.' })
      ),
    })
  ),
  metadata: MetadataSchema,
});
export type ImageResultT = Static<typeof ImageResult>;
