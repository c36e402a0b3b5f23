import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest, FastifySchema } from 'fastify';
import { type ErrorCode, fieldError } from '../../../core/kit/area.js';
import type { ImageUploadOptions, MediaService } from '../media/media-service.js';
import type { ImageResultT } from '../media/schemas.js';
import {
  checkImageCount,
  imageFile,
  MAX_EDIT_IMAGES,
  MAX_MASK_BYTES,
  MAX_UPLOAD_IMAGE_BYTES,
} from '../media/image-files.js';
import { IMAGE_SIZE } from '../media/schemas.js';
import { readUpload, type Upload } from './multipart-upload.js';
import { ROUTED } from './wire.js';

const SIZE = new RegExp(IMAGE_SIZE);

/** OpenAI's text fields shared by edits and variations: `model` (a model id or a routing word), `n`, `size`, `response_format`. */
function uploadOptions(fields: Upload['fields']): ImageUploadOptions {
  const { model, n, size, response_format: format } = fields;
  if (fields.stream === 'true') throw fieldError('stream', 'is not served; send the request without it');
  if (n !== undefined && !/^([1-9]|10)$/.test(n)) throw fieldError('n', 'must be an integer from 1 to 10');
  if (size !== undefined && !SIZE.test(size))
    throw fieldError('size', 'must be `WIDTHxHEIGHT` (e.g. `1024x1024`) or `auto`');
  if (format !== undefined && format !== 'url' && format !== 'b64_json')
    throw fieldError('response_format', 'must be `url` or `b64_json`');
  const routed = !model || ROUTED.has(model);
  return {
    n: n ? Number(n) : 1,
    ...(size ? { size } : {}),
    response_format: format ?? 'url',
    ...(routed
      ? { prefer: !model || model === 'auto' ? 'balanced' : (model as 'balanced' | 'cheapest' | 'smartest') }
      : { model }),
  };
}

/** OpenAI's answer: `{ created, data: [{ url } | { b64_json }] }`, the URLs being the gateway's signed result URLs. */
function openAiImages(r: ImageResultT, format: ImageUploadOptions['response_format']) {
  return {
    created: Math.floor(Date.now() / 1000),
    data: r.images.map((i) => (format === 'b64_json' ? { b64_json: i.b64 } : { url: i.url })),
  };
}

/**
 * /v1/openai/images/edits and /v1/openai/images/variations: OpenAI's multipart uploads, so
 * `client.images.edit` and `client.images.createVariation` of the official SDK work against the
 * gateway. In a scope of their own: only these routes parse multipart/form-data, with caps
 * on each file and on the count, so an oversized upload fails before anything is routed.
 */
export async function registerOpenAiImageUploadRoutes(app: FastifyInstance, media: MediaService): Promise<void> {
  const cap = app.svc.config.limits.large_body_bytes;
  const fileBytes = Math.min(MAX_UPLOAD_IMAGE_BYTES, cap);
  await app.register(multipart, {
    limits: { fileSize: fileBytes, files: MAX_EDIT_IMAGES + 1, fields: 32, fieldSize: 64 * 1024, parts: 64 },
  });
  const config = (operation: string, capability: string) => ({
    scope: 'ai',
    operation,
    capability,
    errors: ['unprocessable', 'payload_too_large', 'unsupported_media_type'] as ErrorCode[],
  });

  app.post(
    '/v1/openai/images/edits',
    {
      bodyLimit: cap,
      config: config('openai.images.edits', 'ai.image.edit'),
      schema: {
        summary: 'OpenAI Images: edits (multipart/form-data: `image` or `image[]`, `mask?`, `prompt`)',
        tags: ['openai'],
        consumes: ['multipart/form-data'],
      } as FastifySchema,
    },
    async (req: FastifyRequest) => {
      const { files, fields } = await readUpload(req, 'image edit', {
        fileBytes,
        fileParam: 'image',
        tooManyFiles: `Send at most ${MAX_EDIT_IMAGES} images and one mask.`,
      });
      const unknown = files.find((f) => !['image', 'image[]', 'mask'].includes(f.field));
      if (unknown)
        throw fieldError(unknown.field, 'is not a file field of an image edit (send `image`, `image[]` or `mask`)');
      const uploads = files.filter((f) => f.field !== 'mask');
      const masks = files.filter((f) => f.field === 'mask');
      if (!uploads.length) throw fieldError('image', 'is required');
      checkImageCount(uploads.length, 'image');
      if (masks.length > 1) throw fieldError('mask', 'must be one file');
      if (!fields.prompt?.trim()) throw fieldError('prompt', 'is required');
      if (fields.prompt.length > 32_000) throw fieldError('prompt', 'must be at most 32000 characters');
      const opts = uploadOptions(fields);
      const images = uploads.map((f, i) => imageFile(f.bytes, uploads.length > 1 ? `image[${i}]` : 'image'));
      const mask = masks.length
        ? imageFile(masks[0].bytes, 'mask', { maxBytes: MAX_MASK_BYTES, pngOnly: true })
        : undefined;
      return openAiImages(
        await media.editImage(req, { ...opts, prompt: fields.prompt, images, ...(mask ? { mask } : {}) }),
        opts.response_format
      );
    }
  );

  app.post(
    '/v1/openai/images/variations',
    {
      bodyLimit: cap,
      config: config('openai.images.variations', 'ai.image.variation'),
      schema: {
        summary: 'OpenAI Images: variations (multipart/form-data: one `image`)',
        tags: ['openai'],
        consumes: ['multipart/form-data'],
      } as FastifySchema,
    },
    async (req: FastifyRequest) => {
      const { files, fields } = await readUpload(req, 'image variation', {
        fileBytes,
        fileParam: 'image',
        tooManyFiles: 'Send one image.',
      });
      const unknown = files.find((f) => f.field !== 'image');
      if (unknown) throw fieldError(unknown.field, 'is not a file field of an image variation (send one `image`)');
      if (!files.length) throw fieldError('image', 'is required');
      if (files.length > 1) throw fieldError('image', 'must be one file');
      const opts = uploadOptions(fields);
      return openAiImages(
        await media.imageVariation(req, { ...opts, image: imageFile(files[0].bytes, 'image') }),
        opts.response_format
      );
    }
  );
}
