import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { MediaService } from '../media/media-service.js';
import { IMAGE_SIZE } from '../media/schemas.js';
import { apiError } from '../../../core/kit/area.js';

const ROUTED: Record<string, 'balanced' | 'cheapest' | 'smartest'> = {
  auto: 'balanced',
  balanced: 'balanced',
  cheapest: 'cheapest',
  smartest: 'smartest',
};

// OpenAI's request as its SDK sends it; fields the gateway does not use (quality, style,
// user, background…) are accepted and ignored so existing clients keep working.
export const OaImageBody = Type.Object(
  {
    prompt: Type.String({ minLength: 1, maxLength: 32_000 }),
    model: Type.Optional(
      Type.Union([
        Type.String({
          minLength: 1,
          description: 'A catalog image model, or `auto`, `cheapest`, `smartest` to let the gateway route.',
        }),
        Type.Null(),
      ])
    ),
    n: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 10 }), Type.Null()])),
    size: Type.Optional(Type.Union([Type.String({ pattern: IMAGE_SIZE }), Type.Null()])),
    response_format: Type.Optional(Type.Union([Type.Literal('url'), Type.Literal('b64_json'), Type.Null()])),
  },
  { additionalProperties: true }
);
export type OaImageBodyT = Static<typeof OaImageBody>;

/** POST /v1/openai/images/generations: OpenAI's Images API over the same router, wallet and result store as /v1/ai/image. */
export function registerOpenAiImageRoutes(app: FastifyInstance, media: MediaService): void {
  app.post(
    '/v1/openai/images/generations',
    {
      bodyLimit: app.svc.config.limits.large_body_bytes,
      config: {
        scope: 'ai',
        operation: 'openai.images.generations',
        capability: 'ai.image',
        errors: ['unprocessable'],
        idempotent: true,
      },
      schema: { summary: 'OpenAI Images: generations', tags: ['openai'], body: OaImageBody },
    },
    async (req: FastifyRequest<{ Body: OaImageBodyT }>) => {
      const b = req.body;
      // Streamed partial images are not offered: refused before anything is made or charged.
      if ((b as { stream?: unknown }).stream === true)
        throw apiError(
          'validation_failed',
          'stream is not supported for image generation here; leave it out to get the finished images.',
          { param: 'stream' }
        );
      const routed = !b.model || ROUTED[b.model];
      // OpenAI answers gpt-image-* models with b64_json always (they take no response_format),
      // so its clients read data[0].b64_json: the same here unless a URL is asked for.
      const format = b.response_format ?? (b.model?.startsWith('gpt-image') ? 'b64_json' : 'url');
      const r = await media.image(req, {
        prompt: b.prompt,
        n: b.n ?? 1,
        ...(b.size ? { size: b.size } : {}),
        response_format: format,
        ...(routed ? { prefer: ROUTED[b.model ?? 'auto'] } : { model: b.model! }),
      });
      return {
        created: Math.floor(Date.now() / 1000),
        // Like OpenAI: either the URL or the bytes, as asked.
        data: r.images.map((i) => (format === 'b64_json' ? { b64_json: i.b64 } : { url: i.url })),
      };
    }
  );
}
