import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ErrorCode } from '../../core/kit/area.js';
import type { PdfService } from './service.js';
import {
  GenerateBody,
  MergeBody,
  OcrBody,
  OcrResult,
  PdfResult,
  SplitBody,
  SplitResult,
  WatermarkBody,
  type GenerateBodyT,
  type MergeBodyT,
  type OcrBodyT,
  type SplitBodyT,
  type WatermarkBodyT,
} from './schemas.js';

const ERRORS: ErrorCode[] = ['unprocessable', 'payload_too_large', 'fetch_failed', 'fetch_timeout'];

interface Op {
  path: string;
  capability: string;
  summary: string;
  body: object;
  response: object;
  handle: (req: FastifyRequest<{ Body: any }>) => Promise<unknown>;
}

/** POST /v1/pdf/{generate,merge,split,ocr,watermark}; `pagePrices` describes the per-page part of each price. */
export function registerPdfRoutes(app: FastifyInstance, pdf: PdfService, pagePrices: Record<string, string>): void {
  const ops: Op[] = [
    {
      path: 'generate',
      capability: 'pdf.render',
      summary: 'Render HTML, a web page or a saved template to PDF',
      body: GenerateBody,
      response: PdfResult,
      handle: (req: FastifyRequest<{ Body: GenerateBodyT }>) => pdf.generate(req, req.body),
    },
    {
      path: 'merge',
      capability: 'pdf.merge',
      summary: 'Join PDFs into one, in order',
      body: MergeBody,
      response: PdfResult,
      handle: (req: FastifyRequest<{ Body: MergeBodyT }>) => pdf.merge(req, req.body),
    },
    {
      path: 'split',
      capability: 'pdf.split',
      summary: 'Cut page ranges out of a PDF, one document a range',
      body: SplitBody,
      response: SplitResult,
      handle: (req: FastifyRequest<{ Body: SplitBodyT }>) => pdf.split(req, req.body),
    },
    {
      path: 'ocr',
      capability: 'pdf.ocr',
      summary: "A PDF's text, page by page: its text layer, else recognised from the page image",
      body: OcrBody,
      response: OcrResult,
      handle: (req: FastifyRequest<{ Body: OcrBodyT }>) => pdf.ocr(req, req.body),
    },
    {
      path: 'watermark',
      capability: 'pdf.watermark',
      summary: 'Stamp text or an image on every page of a PDF',
      body: WatermarkBody,
      response: PdfResult,
      handle: (req: FastifyRequest<{ Body: WatermarkBodyT }>) => pdf.watermark(req, req.body),
    },
  ];
  for (const op of ops) {
    app.post(
      `/v1/pdf/${op.path}`,
      {
        config: {
          scope: 'pdf',
          operation: `pdf.${op.path}`,
          capability: op.capability,
          idempotent: true,
          errors: op.path === 'generate' ? [...ERRORS, 'not_found'] : ERRORS,
        },
        schema: {
          summary: op.summary,
          ...(pagePrices[op.capability] ? { description: pagePrices[op.capability] } : {}),
          tags: ['pdf'],
          body: op.body,
          response: { 200: op.response },
        },
      },
      op.handle
    );
  }
}
