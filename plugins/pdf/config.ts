import { Type, type Static } from '@sinclair/typebox';

const usd = (def: number, description: string) => Type.Number({ minimum: 0, default: def, description });

/** `plugins.pdf` in the config file. Prices are before wallet.markup; a page price of 0 makes the call flat. */
export const PdfConfig = Type.Object(
  {
    generate_price_usd: usd(0.002, 'Charged for each document POST /v1/pdf/generate renders.'),
    generate_page_price_usd: usd(0.0005, 'Added for each page of a generated document.'),
    merge_price_usd: usd(0.001, 'Charged for each POST /v1/pdf/merge.'),
    merge_page_price_usd: usd(0, 'Added for each page of the merged document.'),
    split_price_usd: usd(0.001, 'Charged for each POST /v1/pdf/split.'),
    split_page_price_usd: usd(0, 'Added for each page of the parts.'),
    watermark_price_usd: usd(0.001, 'Charged for each POST /v1/pdf/watermark.'),
    watermark_page_price_usd: usd(0, 'Added for each page watermarked.'),
    ocr_price_usd: usd(0, 'Charged for each POST /v1/pdf/ocr.'),
    ocr_page_price_usd: usd(0.002, 'Added for each page of the document read.'),
    reserve_pages: Type.Integer({
      minimum: 1,
      maximum: 100_000,
      default: 200,
      description:
        'Pages a per-page price reserves before the call (the page count is known only after it); '
        + 'a document beyond it is charged for this many pages.',
    }),
    javascript: Type.Boolean({
      default: false,
      description: "Run a page's scripts when generating from html, url or a template (off: static HTML only).",
    }),
    timeout_seconds: Type.Number({
      minimum: 1,
      maximum: 600,
      default: 120,
      description: 'Longest a PDF call may take, fetching its inputs excluded.',
    }),
    max_template_bytes: Type.Integer({
      minimum: 1024,
      maximum: 1024 * 1024,
      default: 256 * 1024,
      description: "Largest template's HTML accepted by POST /v1/pdf/templates, in bytes (UTF-8).",
    }),
    max_template_depth: Type.Integer({
      minimum: 1,
      maximum: 100,
      default: 8,
      description: 'Deepest nesting of sections ({{#a}}{{#b}}...) accepted by POST /v1/pdf/templates.',
    }),
    template_render_seconds: Type.Number({
      minimum: 0.1,
      maximum: 60,
      default: 5,
      description: 'Longest filling a template may take (in a worker thread, then stopped: 422).',
    }),
  },
  { additionalProperties: false, default: {} }
);

export type PdfConfigT = Static<typeof PdfConfig>;
