import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorBody } from '../../core/kit/area.js';
import {
  ChatBody,
  ChatResult,
  EmbedBody,
  EmbedResult,
  type ChatBodyT,
  type ChatResultT,
  type ChatStreamChunkT,
  type EmbedBodyT,
} from './schemas.js';
import type { AiService } from './service.js';
import { replayStream, streamChat, type StreamWriter } from './stream-runner.js';
import { BatchAccepted } from './batch/routes.js';
import { submitBatch, type BatchDeps } from './batch/submit.js';

const sse = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;

/** The conventions' SSE: `data: <ChatStreamChunk>` events, the last with finish_reason and usage, then `data: [DONE]`. */
function nativeWriter(requestId: string): StreamWriter {
  let index = 0;
  return {
    head: (vendor) => ({ 'x-svc-vendor': vendor }),
    event: (ev) => {
      const chunk: ChatStreamChunkT = { delta: ev.delta ?? '', finish_reason: null, index: index++ };
      if (ev.tool_calls?.length) chunk.tool_calls = ev.tool_calls;
      return sse(chunk);
    },
    end: (e) =>
      `${sse({
        delta: '',
        finish_reason: e.finish_reason,
        index: index++,
        usage: { ...e.usage, total_tokens: e.usage.input_tokens + e.usage.output_tokens },
        metadata: e.metadata,
      })}data: [DONE]\n\n`,
    error: (e) => `event: error\n${sse(errorBody(e, requestId))}`,
  };
}

export function registerAiRoutes(app: FastifyInstance, ai: AiService, batches: BatchDeps): void {
  app.post(
    '/v1/ai/chat',
    {
      config: {
        scope: 'ai',
        operation: 'ai.chat',
        capability: 'ai.chat',
        idempotent: true,
        errors: ['unprocessable'],
        // A stream's retry with the same key replays the stored answer as a stream (the body,
        // stream: true included, is the same: a different one is 409 before this).
        replayIdempotent: (req, reply, stored) => {
          if (!(req.body as ChatBodyT).stream || stored.status !== 200) return false;
          replayStream(req, reply, nativeWriter(req.id), JSON.parse(stored.body) as ChatResultT, {
            'idempotent-replayed': 'true',
          });
          return true;
        },
      },
      schema: {
        summary: 'Chat with a routed model; `stream: true` answers with Server-Sent Events',
        tags: ['ai'],
        body: ChatBody,
        response: { 200: ChatResult, 202: BatchAccepted },
      },
    },
    async (req: FastifyRequest<{ Body: ChatBodyT }>, reply: FastifyReply) => {
      const body = req.body;
      if (body.batch_mode) return reply.code(202).send(await submitBatch(batches, req, body));
      if (!body.stream) return ai.chat(req, body);
      await streamChat(req, reply, ai, body, () => nativeWriter(req.id));
      return reply;
    }
  );

  app.post(
    '/v1/ai/embed',
    {
      config: {
        scope: 'ai',
        operation: 'ai.embed',
        capability: 'ai.embed',
        idempotent: true,
        errors: ['unprocessable'],
      },
      schema: {
        summary: 'Embed one text or a list, in input order',
        tags: ['ai'],
        body: EmbedBody,
        response: { 200: EmbedResult },
      },
    },
    async (req: FastifyRequest<{ Body: EmbedBodyT }>) => ai.embed(req, req.body)
  );
}
