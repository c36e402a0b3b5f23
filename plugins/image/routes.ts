import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TObject } from '@sinclair/typebox';
import type { ErrorCode } from '../../core/kit/area.js';
import type { ImageService } from './service.js';
import { acceptImageForms, uploadDigest } from './form.js';
import {
  ImageMetadata,
  ImageOpResult,
  MetadataBody,
  MetadataForm,
  ProcessBody,
  ProcessForm,
  type MetadataBodyT,
  type ProcessBodyT,
} from './schemas.js';

const ERRORS: ErrorCode[] = ['unprocessable', 'payload_too_large', 'fetch_failed', 'fetch_timeout'];

/** The JSON body of the spec, and the same fields as multipart/form-data with the image as a file part. */
const bodies = (json: TObject, form: TObject) => ({
  content: { 'application/json': { schema: json }, 'multipart/form-data': { schema: form } },
});

/**
 * POST /v1/image/process and /v1/image/metadata: base64 JSON or a multipart upload, so the
 * large body limit (25 MiB by default). The upload skips JSON parsing and base64 on the hot
 * path (BENCHMARKS.md, `image`): a 1.2 MB photo costs the event loop a scan for the boundary.
 */
export function registerImageRoutes(
  app: FastifyInstance,
  images: ImageService,
  opts: { removeMicros: number; uploadBufferBytes: number }
): void {
  const bodyLimit = app.svc.config.limits.large_body_bytes;
  acceptImageForms(
    app,
    (req) => (req.url.startsWith('/v1/image/metadata') ? MetadataForm : ProcessForm),
    opts.uploadBufferBytes
  );
  // Discovery prices a route by its one capability; background removal is a second one inside
  // this route, so its price (with the markup, as charged) is told in the description.
  const removeUsd = Math.ceil(opts.removeMicros * app.svc.config.wallet.markup) / 1_000_000;

  app.post(
    '/v1/image/process',
    {
      bodyLimit,
      config: {
        scope: 'image',
        operation: 'image.process',
        capability: 'image.process',
        idempotent: true,
        idempotencyExtra: uploadDigest,
        errors: ERRORS,
      },
      schema: {
        summary: 'Resize, rotate, watermark, compress or convert an image; the result is saved and returned as a URL',
        description:
          `Each \`remove_background\` operation (capability image.remove_background) is charged ${removeUsd} USD, `
          + 'whichever engine serves it; the other operations, when there are any, the price listed here.',
        tags: ['image'],
        body: bodies(ProcessBody, ProcessForm),
        response: { 200: ImageOpResult },
      },
    },
    async (req: FastifyRequest<{ Body: ProcessBodyT }>) => images.process(req, req.body)
  );

  app.post(
    '/v1/image/metadata',
    {
      bodyLimit,
      config: {
        scope: 'image',
        operation: 'image.metadata',
        capability: 'image.metadata',
        idempotent: true,
        idempotencyExtra: uploadDigest,
        errors: ERRORS,
      },
      schema: {
        summary: 'Dimensions, type and EXIF of an image',
        tags: ['image'],
        body: bodies(MetadataBody, MetadataForm),
        response: { 200: ImageMetadata },
      },
    },
    async (req: FastifyRequest<{ Body: MetadataBodyT }>) => images.metadata(req, req.body)
  );
}
