import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import { toApiError } from '../../../core/http/error-handler.js';
import { base62 } from '../../../core/ids.js';
import { vendorKey } from '../planner.js';
import type { AiService } from '../service.js';
import { streamChat } from '../stream-runner.js';
import { OaChatBody, OaEmbedBody, type OaChatBodyT, type OaEmbedBodyT } from './schemas.js';
import { completion, fromOpenAi, oaError, openAiWriter } from './wire.js';
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
    return reply.code(e.status).type('application/json; charset=utf-8').send(oaError(e));
  });

  app.post('/v1/openai/chat/completions', {
    bodyLimit: app.svc.config.limits.large_body_bytes, // image parts carry base64
    config: { scope: 'ai', operation: 'openai.chat.completions', capability: 'ai.chat', errors: ['unprocessable', 'fetch_failed', 'fetch_timeout'] },
    schema: { summary: 'OpenAI Chat Completions (stream and not)', tags: ['openai'], body: OaChatBody },
  }, async (req: FastifyRequest<{ Body: OaChatBodyT }>, reply: FastifyReply) => {
    const split = media && splitImageParts(req.body);
    if (split) return openAiVisionChat(req, reply, ai, media, split, `chatcmpl-${base62(24)}`);
    const body = fromOpenAi(req.body);
    const id = `chatcmpl-${base62(24)}`;
    if (!req.body.stream) return completion(await ai.chat(req, body), id);
    await streamChat(req, reply, ai, body, (model) => openAiWriter(id, model ?? req.body.model, !!req.body.stream_options?.include_usage));
    return reply;
  });

  app.post('/v1/openai/embeddings', {
    config: { scope: 'ai', operation: 'openai.embeddings', capability: 'ai.embed', errors: ['unprocessable'] },
    schema: { summary: 'OpenAI Embeddings', tags: ['openai'], body: OaEmbedBody },
  }, async (req: FastifyRequest<{ Body: OaEmbedBodyT }>) => {
    const b = req.body;
    const r = await ai.embed(req, { input: b.input, model: b.model, ...(b.dimensions ? { dimensions: b.dimensions } : {}) });
    // The SDK asks for base64 by default: little-endian float32, as OpenAI sends it.
    const encode = (v: number[]) => (b.encoding_format === 'base64' ? Buffer.from(new Float32Array(v).buffer).toString('base64') : v);
    return {
      object: 'list', model: r.model,
      data: r.embeddings.map((embedding, index) => ({ object: 'embedding', index, embedding: encode(embedding) })),
      usage: { prompt_tokens: r.usage.input_tokens, total_tokens: r.usage.total_tokens },
    };
  });

  app.get('/v1/openai/models', {
    config: { scope: 'ai', operation: 'openai.models' },
    schema: { summary: 'Models this gateway can route to', tags: ['openai'] } as FastifySchema,
  }, async () => {
    const seen = new Set<string>();
    const data: Array<{ id: string; object: 'model'; created: number; owned_by: string }> = [];
    for (const inst of [...app.svc.vendors.serving('ai.chat'), ...app.svc.vendors.serving('ai.embed')]) {
      if (ai.byokOnly.has(inst.id)) continue;
      const restricted = inst.instance.capabilities['ai.chat']?.models ?? inst.instance.capabilities['ai.embed']?.models;
      const ids = restricted?.length ? restricted : ai.catalog.all().filter((m) => m.vendor === vendorKey(inst)).map((m) => m.id);
      for (const id of ids) if (!seen.has(id)) (seen.add(id), data.push({ id, object: 'model', created: 0, owned_by: vendorKey(inst) }));
    }
    return { object: 'list', data };
  });
}
