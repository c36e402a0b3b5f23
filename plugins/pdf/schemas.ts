import { Type, type Static } from '@sinclair/typebox';
import {
  IdempotencyKey,
  PDF_FORMATS,
  PDF_MAX_MERGE_URLS,
  PDF_MAX_SPLIT_RANGES,
  PDF_ORIENTATIONS,
  PDF_POSITIONS,
} from '../../core/kit/area.js';

const lit = <T extends string>(values: readonly T[], opts = {}) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    opts
  );
const strict = { additionalProperties: false } as const;
const PdfUrl = (description = 'Address of a PDF, fetched under the egress rules.') =>
  Type.String({ minLength: 1, maxLength: 8192, description });

export const PdfResult = Type.Object({
  pdf_url: Type.String({ description: 'URL of the PDF (kept for the result retention period).' }),
  bytes: Type.Integer(),
  pages: Type.Integer(),
});
export type PdfResultT = Static<typeof PdfResult>;

export const GenerateBody = Type.Object(
  {
    html: Type.Optional(Type.String({ minLength: 1, description: 'HTML to render.' })),
    url: Type.Optional(PdfUrl('Address of a page to render, fetched under the egress rules.')),
    template_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'A saved template (tpl_…).' })),
    template_vars: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description:
          "Values for the template's {{tags}} (escaped as HTML; {{{triple}}} tags are not). Only with template_id.",
      })
    ),
    format: Type.Optional(lit(PDF_FORMATS, { default: 'A4' })),
    orientation: Type.Optional(lit(PDF_ORIENTATIONS, { default: 'portrait' })),
    idempotency_key: Type.Optional(IdempotencyKey),
  },
  {
    ...strict,
    description: 'Exactly one of html, url and template_id.',
    examples: [{ html: '<h1>Invoice 42</h1><table><tr><td>Total</td><td>9.90</td></tr></table>' }],
  }
);
export type GenerateBodyT = Static<typeof GenerateBody>;

export const MergeBody = Type.Object(
  {
    urls: Type.Array(PdfUrl(), {
      minItems: 1,
      description: `PDFs to join, in order (at most ${PDF_MAX_MERGE_URLS}; more is 413).`,
    }),
    idempotency_key: Type.Optional(IdempotencyKey),
  },
  { ...strict, examples: [{ urls: ['https://example.com/a.pdf', 'https://example.com/b.pdf'] }] }
);
export type MergeBodyT = Static<typeof MergeBody>;

export const SplitBody = Type.Object(
  {
    url: PdfUrl(),
    ranges: Type.Array(Type.String({ minLength: 1, maxLength: 20 }), {
      minItems: 1,
      description:
        `Page ranges, 1-based: \`1-3\`, \`4-\` (to the end), \`5\`; one document each (at most ${PDF_MAX_SPLIT_RANGES}; `
        + 'more is 413). A range past the last page is 422.',
      examples: [['1-3', '4-']],
    }),
    idempotency_key: Type.Optional(IdempotencyKey),
  },
  { ...strict, examples: [{ url: 'https://example.com/a.pdf', ranges: ['1-3', '4-'] }] }
);
export type SplitBodyT = Static<typeof SplitBody>;
export const SplitResult = Type.Object({ parts: Type.Array(PdfResult) });

export const OcrBody = Type.Object(
  {
    url: PdfUrl(),
    language: Type.Optional(
      Type.String({
        minLength: 2,
        maxLength: 64,
        description: 'Hint: ISO 639-1 (`en`, `de`) or tesseract codes (`eng`, `eng+deu`); default English.',
      })
    ),
    idempotency_key: Type.Optional(IdempotencyKey),
  },
  { ...strict, examples: [{ url: 'https://example.com/scan.pdf', language: 'en' }] }
);
export type OcrBodyT = Static<typeof OcrBody>;
export const OcrResult = Type.Object({
  text: Type.String({ description: "The document's text, page after page." }),
  pages: Type.Array(
    Type.Object({
      text: Type.String(),
      source: Type.Optional(
        lit(['text_layer', 'ocr'] as const, { description: 'Read from the text layer, or recognised from the image.' })
      ),
    })
  ),
});

export const WatermarkBody = Type.Object(
  {
    url: PdfUrl(),
    text: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    image_url: Type.Optional(PdfUrl('A PNG or JPEG, fetched under the egress rules.')),
    opacity: Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: 0.3 })),
    position: Type.Optional(lit(PDF_POSITIONS, { default: 'center' })),
    rotation: Type.Optional(
      Type.Number({
        minimum: -360,
        maximum: 360,
        description: 'Degrees counter-clockwise; default 45 for text (diagonal), 0 for an image.',
      })
    ),
    idempotency_key: Type.Optional(IdempotencyKey),
  },
  {
    ...strict,
    description: 'Exactly one of text and image_url; stamped on every page.',
    examples: [{ url: 'https://example.com/a.pdf', text: 'CONFIDENTIAL' }],
  }
);
export type WatermarkBodyT = Static<typeof WatermarkBody>;

export const TemplateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    html: Type.String({ minLength: 1, description: 'HTML with mustache tags ({{name}} escaped, {{{name}}} raw).' }),
  },
  { ...strict, examples: [{ name: 'invoice', html: '<h1>Invoice {{number}}</h1><p>{{customer}}</p>' }] }
);
export type TemplateBodyT = Static<typeof TemplateBody>;

export const Template = Type.Object({
  template_id: Type.String(),
  name: Type.String(),
  html: Type.String(),
  created_at: Type.String(),
});
export type TemplateT = Static<typeof Template>;

export const TemplateParams = Type.Object({ template_id: Type.String({ maxLength: 100 }) }, strict);
export const Deleted = Type.Object({ ok: Type.Boolean() });
