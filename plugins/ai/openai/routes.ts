import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import { Type } from '@sinclair/typebox';
import { apiError, toApiError, base62 } from '../../../core/kit/area.js';
import { vendorKey } from '../planner.js';
import type { AiService } from '../service.js';
import { replayStream, streamChat } from '../stream-runner.js';
import type { ChatResultT } from '../schemas.js';
import { OaChatBody, OaEmbedBody, type OaChatBodyT, type OaEmbedBodyT } from './schemas.js';
import { completion, fromOpenAi, oaError, openAiWriter, ROUTED } from './wire.js';
import type { MediaService } from '../media/media-service.js';
import { openAiVisionChat, splitImageParts } from './vision-chat.js';

/**
 * The OpenAI-compatible surface under /v1/openai: the official `openai` SDK works with
 * `baseURL: <gateway>/v1/openai` and the project key. Same router, wallet, cache and BYOK as /v1/ai.
 */
export function registerOpenAiRoutes(app: FastifyInstance, ai: AiService, media?: MediaService): void {
  app.setErrorHandler((err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    const e = toApiError(err, req);
    if (e.code === 'internal_error') req.log.error({ err }, 'unhandled error');
    for (const [k, v] of Object.entries(e.headers)) reply.header(k, v);
    // The SDK retries a 503 twice unless told not to; no vendor configured will not change in a second.
    if (e.code === 'no_vendor_available') reply.header('x-should-retry', 'false');
    return reply.code(e.status).type('application/json; charset=utf-8').send(oaError(e));
  });

  app.post(
    '/v1/openai/chat/completions',
    {
      bodyLimit: app.svc.config.limits.large_body_bytes, // image parts carry base64
      config: {
        scope: 'ai',
        operation: 'openai.chat.completions',
        capability: 'ai.chat',
        errors: ['unprocessable', 'fetch_failed', 'fetch_timeout'],
        // An Idempotency-Key header works as on /v1/ai/chat: a stream's retry replays the stored answer as chunks.
        idempotent: true,
        replayIdempotent: (req, reply, stored) => {
          const b = req.body as OaChatBodyT;
          if (!b.stream || stored.status !== 200) return false;
          const hit = JSON.parse(stored.body) as ChatResultT;
          replayStream(
            req,
            reply,
            openAiWriter(`chatcmpl-${base62(24)}`, hit.metadata.model || b.model, !!b.stream_options?.include_usage),
            hit,
            { 'idempotent-replayed': 'true' }
          );
          return true;
        },
      },
      schema: { summary: 'OpenAI Chat Completions (stream and not)', tags: ['openai'], body: OaChatBody },
    },
    async (req: FastifyRequest<{ Body: OaChatBodyT }>, reply: FastifyReply) => {
      const split = media && splitImageParts(req.body);
      if (split) return openAiVisionChat(req, reply, ai, media, split, `chatcmpl-${base62(24)}`);
      const body = fromOpenAi(req.body);
      const id = `chatcmpl-${base62(24)}`;
      if (!req.body.stream) return completion(await ai.chat(req, body), id);
      await streamChat(req, reply, ai, body, (model) =>
        openAiWriter(id, model ?? req.body.model, !!req.body.stream_options?.include_usage)
      );
      return reply;
    }
  );

  app.post<{ Body: OaEmbedBodyT }>(
    '/v1/openai/embeddings',
    {
      config: {
        scope: 'ai',
        operation: 'openai.embeddings',
        capability: 'ai.embed',
        errors: ['unprocessable'],
        idempotent: true,
      },
      schema: { summary: 'OpenAI Embeddings', tags: ['openai'], body: OaEmbedBody },
      // Token arrays would fail the schema with "must be string"; say what is wrong instead.
      preValidation: async (req) => {
        const input = (req.body as { input?: unknown } | undefined)?.input;
        const tokens = (v: unknown) =>
          typeof v === 'number' || (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'number'));
        if (
          Array.isArray(input)
          && input.length
          && (input.every((x) => typeof x === 'number') || input.every(tokens))
        ) {
          throw apiError(
            'validation_failed',
            'input as token ids is not supported here: send the text (a string or a list of strings).',
            { param: 'input' }
          );
        }
      },
    },
    async (req: FastifyRequest<{ Body: OaEmbedBodyT }>) => {
      const b = req.body;
      // `auto` (or another routing word) lets the gateway pick the model, as on chat.
      const model = ROUTED.has(b.model) ? undefined : b.model;
      const r = await ai.embed(req, {
        input: b.input,
        ...(model ? { model } : {}),
        ...(b.dimensions ? { dimensions: b.dimensions } : {}),
      });
      // The SDK asks for base64 by default: little-endian float32, as OpenAI sends it.
      const encode = (v: number[]) =>
        b.encoding_format === 'base64' ? Buffer.from(new Float32Array(v).buffer).toString('base64') : v;
      return {
        object: 'list',
        model: r.model,
        data: r.embeddings.map((embedding, index) => ({ object: 'embedding', index, embedding: encode(embedding) })),
        usage: { prompt_tokens: r.usage.input_tokens, total_tokens: r.usage.total_tokens },
      };
    }
  );

  const models = () => {
    const seen = new Set<string>();
    const data: Array<{ id: string; object: 'model'; created: number; owned_by: string }> = [];
    for (const inst of [...app.svc.vendors.serving('ai.chat'), ...app.svc.vendors.serving('ai.embed')]) {
      if (ai.byokOnly.has(inst.id)) continue;
      const restricted =
        inst.instance.capabilities['ai.chat']?.models ?? inst.instance.capabilities['ai.embed']?.models;
      const ids = restricted?.length
        ? restricted
        : ai.catalog
            .all()
            .filter((m) => m.vendor === vendorKey(inst))
            .map((m) => m.id);
      for (const id of ids)
        if (!seen.has(id)) seen.add(id), data.push({ id, object: 'model', created: 0, owned_by: vendorKey(inst) });
    }
    return data;
  };

  app.get(
    '/v1/openai/models',
    {
      config: { scope: 'ai', operation: 'openai.models' },
      schema: { summary: 'Models this gateway can route to', tags: ['openai'] } as FastifySchema,
    },
    async () => ({ object: 'list', data: models() })
  );

  app.get(
    '/v1/openai/models/:model',
    {
      config: { scope: 'ai', operation: 'openai.models.retrieve' },
      schema: {
        summary: 'One model this gateway can route to',
        tags: ['openai'],
        params: Type.Object({ model: Type.String({ minLength: 1, maxLength: 256 }) }),
      },
    },
    async (req: FastifyRequest<{ Params: { model: string } }>) => {
      const m = models().find((x) => x.id === req.params.model);
      if (!m)
        throw apiError(
          'not_found',
          `The model '${req.params.model}' does not exist or this gateway routes to no vendor serving it.`,
          { param: 'model' }
        );
      return m;
    }
  );
}
