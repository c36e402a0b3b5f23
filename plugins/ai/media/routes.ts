import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ChatResult } from '../schemas.js';
import type { MediaService } from './media-service.js';
import {
  ImageBody,
  ImageEditBody,
  ImageResult,
  ImageVariationBody,
  VisionBody,
  type ImageBodyT,
  type ImageEditBodyT,
  type ImageVariationBodyT,
  type VisionBodyT,
} from './schemas.js';

/** POST /v1/ai/vision, /v1/ai/image, /v1/ai/image/edit and /v1/ai/image/variation: base64 payloads, so the large body limit (25 MiB by default). */
export function registerMediaRoutes(app: FastifyInstance, media: MediaService): void {
  const bodyLimit = app.svc.config.limits.large_body_bytes;

  app.post(
    '/v1/ai/vision',
    {
      bodyLimit,
      config: {
        scope: 'ai',
        operation: 'ai.vision',
        capability: 'ai.vision',
        errors: ['unprocessable', 'fetch_failed', 'fetch_timeout'],
      },
      schema: {
        summary: 'Ask a vision model about images (URLs are fetched by the gateway, under its egress rules)',
        tags: ['ai'],
        body: VisionBody,
        response: { 200: ChatResult },
      },
    },
    async (req: FastifyRequest<{ Body: VisionBodyT }>) => media.vision(req, req.body)
  );

  app.post(
    '/v1/ai/image',
    {
      bodyLimit,
      config: {
        scope: 'ai',
        operation: 'ai.image',
        capability: 'ai.image',
        idempotent: true,
        errors: ['unprocessable'],
      },
      schema: {
        summary: 'Generate images from a prompt; each is saved and returned as a signed URL',
        tags: ['ai'],
        body: ImageBody,
        response: { 200: ImageResult },
      },
    },
    async (req: FastifyRequest<{ Body: ImageBodyT }>) => media.image(req, req.body)
  );

  app.post(
    '/v1/ai/image/edit',
    {
      bodyLimit,
      config: {
        scope: 'ai',
        operation: 'ai.image.edit',
        capability: 'ai.image.edit',
        idempotent: true,
        errors: ['unprocessable', 'payload_too_large', 'fetch_failed', 'fetch_timeout'],
      },
      schema: {
        summary: 'Edit images as a prompt says (a mask marks where); each result is saved and returned as a signed URL',
        tags: ['ai'],
        body: ImageEditBody,
        response: { 200: ImageResult },
      },
    },
    async (req: FastifyRequest<{ Body: ImageEditBodyT }>) => media.editImageRefs(req, req.body)
  );

  app.post(
    '/v1/ai/image/variation',
    {
      bodyLimit,
      config: {
        scope: 'ai',
        operation: 'ai.image.variation',
        capability: 'ai.image.variation',
        idempotent: true,
        errors: ['unprocessable', 'payload_too_large', 'fetch_failed', 'fetch_timeout'],
      },
      schema: {
        summary: 'Variations of an image; each is saved and returned as a signed URL',
        tags: ['ai'],
        body: ImageVariationBody,
        response: { 200: ImageResult },
      },
    },
    async (req: FastifyRequest<{ Body: ImageVariationBodyT }>) => media.variationImageRef(req, req.body)
  );
}
