import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { apiError } from '../../../core/errors.js';
import { ChatResult } from '../schemas.js';
import { batchRecord } from './store.js';
import type { BatchDeps } from './submit.js';

const BatchState = Type.Union(['queued', 'running', 'succeeded', 'failed'].map((s) => Type.Literal(s)), { description: 'queued → running → succeeded | failed.' });

/** What POST /v1/ai/chat with `batch_mode: true` answers (202). */
export const BatchAccepted = Type.Object({ batch_id: Type.String(), state: BatchState });

export const BatchRecord = Type.Object({
  batch_id: Type.String(),
  state: BatchState,
  created_at: Type.String(),
  completed_at: Type.Union([Type.String(), Type.Null()]),
  result: Type.Optional(ChatResult),
  error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
});

export function registerBatchRoutes(app: FastifyInstance, d: BatchDeps): void {
  app.get('/v1/ai/batches/:id', {
    config: { scope: 'ai', operation: 'ai.batches.get' },
    schema: {
      summary: 'A chat batch: its state and, once succeeded, the ChatResult', tags: ['ai'],
      params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 80 }) }, { additionalProperties: false }), response: { 200: BatchRecord },
    },
  }, async (req: FastifyRequest<{ Params: { id: string } }>) => {
    const row = await d.store.getFor(req.principal!.accountId, req.params.id);
    if (!row) throw apiError('not_found', `No batch ${req.params.id} in this account.`, { param: 'id' });
    return batchRecord(row);
  });
}
