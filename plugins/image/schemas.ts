import { Type, type Static, type TUnion } from '@sinclair/typebox';
import { IdempotencyKey, IMAGE_FITS, IMAGE_FORMATS, WATERMARK_POSITIONS } from '../../core/kit/area.js';

const lit = <T extends string>(values: readonly T[], opts = {}) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    opts
  );
const strict = { additionalProperties: false } as const;
const Side = Type.Integer({ minimum: 1, maximum: 16384, description: 'Pixels.' });
const Quality = Type.Integer({ minimum: 0, maximum: 100, description: '0 (smallest) to 100 (best).' });
const Format = lit(IMAGE_FORMATS);
/** A fill colour: `#rrggbb`, or `#rrggbbaa` with its alpha. */
const Color = (description: string) => Type.String({ pattern: '^#([0-9a-fA-F]{6}|[0-9a-fA-F]{8})$', description });

/** ImageRef: a URL the gateway fetches under its egress rules, or the bytes as base64; exactly one. */
export const ImageRef = Type.Object(
  {
    url: Type.Optional(
      Type.String({ minLength: 1, maxLength: 8192, description: 'http(s) URL, fetched under the egress rules.' })
    ),
    // No minLength: Ajv counts a string's characters one by one to check it (14 % of a 1.6 MB
    // image's request CPU); imageBytes refuses an empty one with the same 400.
    base64: Type.Optional(Type.String({ description: 'The image bytes, base64 (a `data:` URL prefix is accepted).' })),
  },
  { ...strict, description: 'Exactly one of `url` or `base64`.', examples: [{ url: 'https://example.com/photo.jpg' }] }
);
export type ImageRefT = Static<typeof ImageRef>;

const OPERATIONS = [
  Type.Object(
    {
      op: Type.Literal('resize'),
      width: Type.Optional(Side),
      height: Type.Optional(Side),
      fit: Type.Optional(
        lit(IMAGE_FITS, {
          default: 'cover',
          description: 'As CSS object-fit; `inside`/`outside` keep the aspect ratio.',
        })
      ),
      background: Type.Optional(
        Color(
          'Fills the padding of `fit: contain`; default transparent (JPEG, which has no transparency, shows it black).'
        )
      ),
    },
    { ...strict, description: 'At least one of width or height; one alone keeps the aspect ratio.' }
  ),
  Type.Object(
    {
      op: Type.Literal('rotate'),
      angle: Type.Optional(
        Type.Number({ minimum: -360, maximum: 360, description: 'Degrees clockwise; absent: orient by EXIF.' })
      ),
      background: Type.Optional(
        Color('Fills the corners of a rotation that is not a right angle; default transparent.')
      ),
    },
    strict
  ),
  Type.Object(
    {
      op: Type.Literal('watermark'),
      text: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      image: Type.Optional(ImageRef),
      position: Type.Optional(lit(WATERMARK_POSITIONS, { default: 'bottom_right' })),
      opacity: Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: 0.5 })),
      size: Type.Optional(
        Type.Number({
          exclusiveMinimum: 0,
          maximum: 1,
          default: 0.25,
          description: "The mark's width as a fraction of the image's.",
        })
      ),
    },
    { ...strict, description: 'Exactly one of text or image.' }
  ),
  Type.Object({ op: Type.Literal('compress'), quality: Type.Optional(Quality) }, strict),
  Type.Object({ op: Type.Literal('convert'), format: Format, quality: Type.Optional(Quality) }, strict),
  Type.Object({ op: Type.Literal('remove_background') }, strict),
];
/**
 * One of the operations, told apart by `op` (Ajv's discriminator): a bad field is reported
 * against its own operation's schema, and an unknown `op` as such, not as a mismatch of the first.
 */
export const Operation = Type.Unsafe<Static<TUnion<typeof OPERATIONS>>>({
  oneOf: OPERATIONS,
  discriminator: { propertyName: 'op' },
  description: 'One operation: `op` says which.',
});
export type OperationT = Static<typeof Operation>;

export const ProcessBody = Type.Object(
  {
    input: ImageRef,
    operations: Type.Optional(Type.Array(Operation, { maxItems: 20, description: 'Applied in order.' })),
    width: Type.Optional(Side),
    height: Type.Optional(Side),
    format: Type.Optional(Format),
    quality: Type.Optional(Quality),
    keep_metadata: Type.Optional(
      Type.Boolean({
        default: false,
        description: "Keep the input's EXIF (camera, capture time, GPS position) in the output; default: stripped.",
      })
    ),
    idempotency_key: Type.Optional(IdempotencyKey),
  },
  { ...strict, description: 'Top-level width/height/format/quality: a resize and a convert after the operations.' }
);
export type ProcessBodyT = Static<typeof ProcessBody>;

/** A form's file part, as OpenAPI 3.1 describes binary data; never in a validated body (form.ts keeps the bytes). */
const FilePart = (description: string) =>
  Type.Optional(Type.String({ contentMediaType: 'application/octet-stream', description }));
const OPTIONS = Type.Optional(
  Type.String({
    contentMediaType: 'application/json',
    description: 'Every other field as one JSON object, instead of (not as well as) separate form fields.',
  })
);

/**
 * The multipart/form-data form of a JSON body: the image as a file part (`input`, or `file`),
 * the other fields as form fields (numbers and booleans as text, lists as JSON) or one JSON
 * `options` part. Validated without the file parts, which form.ts takes out.
 */
function formOf<T extends typeof ProcessBody | typeof MetadataBody>(body: T) {
  const { input: _input, ...fields } = body.properties;
  return Type.Object(
    {
      input: FilePart('The image bytes (a file part, with a filename).'),
      file: FilePart('The same as `input`, under the name Stripe and Cloudinary uploads use; send one of the two.'),
      options: OPTIONS,
      ...fields,
    },
    { ...strict, description: 'multipart/form-data: the image as a file part, the other fields as form fields.' }
  );
}

export const ImageOpResult = Type.Object({
  image_url: Type.String({ description: 'URL of the result (kept for the result retention period).' }),
  mime: Type.String(),
  width: Type.Optional(Type.Integer()),
  height: Type.Optional(Type.Integer()),
  bytes: Type.Integer(),
});
export type ImageOpResultT = Static<typeof ImageOpResult>;

export const MetadataBody = Type.Object({ input: ImageRef, idempotency_key: Type.Optional(IdempotencyKey) }, strict);
export type MetadataBodyT = Static<typeof MetadataBody>;

export const ProcessForm = formOf(ProcessBody);
export const MetadataForm = formOf(MetadataBody);

export const ImageMetadata = Type.Object({
  width: Type.Integer(),
  height: Type.Integer(),
  mime: Type.String(),
  exif: Type.Optional(
    Type.Record(
      Type.String(),
      Type.Union([
        Type.String(),
        Type.Number(),
        Type.Boolean(),
        Type.Array(Type.Union([Type.String(), Type.Number()])),
      ]),
      { description: "Flat: tag name to value (GPS included: the image is the caller's own)." }
    )
  ),
});
