import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { apiError, IdempotencyKey, ListQuery, Page, decodeCursor, pageOf } from '../../../core/kit/area.js';
import { ChatResult } from '../schemas.js';
import { cancelBatch } from './cancel.js';
import { BATCH_STATES, batchRecord, type BatchState as BatchStateT } from './store.js';
import type { BatchDeps } from './submit.js';

const BatchState = Type.Union(
  BATCH_STATES.map((s) => Type.Literal(s)),
  {
    description:
      'queued → running → succeeded | failed; queued or running → canceled by POST /v1/ai/batches/{id}/cancel.',
  }
);
const BatchIdParams = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 80 }) },
  { additionalProperties: false }
);
const BatchListQuery = Type.Object(
  { ...ListQuery.properties, state: Type.Optional(BatchState) },
  { additionalProperties: false }
);
const CancelBody = Type.Object({ idempotency_key: Type.Optional(IdempotencyKey) }, { additionalProperties: false });

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
  app.get(
    '/v1/ai/batches/:id',
    {
      config: { scope: 'ai', operation: 'ai.batches.get' },
      schema: {
        summary: 'A chat batch: its state and, once succeeded, the ChatResult',
        tags: ['ai'],
        params: BatchIdParams,
        response: { 200: BatchRecord },
      },
    },
    async (req: FastifyRequest<{ Params: { id: string } }>) => {
      const row = await d.store.getFor(req.principal!.accountId, req.params.id);
      if (!row) throw apiError('not_found', `No batch ${req.params.id} in this account.`, { param: 'id' });
      return batchRecord(row);
    }
  );

  app.get(
    '/v1/ai/batches',
    {
      config: { scope: 'ai', operation: 'ai.batches.list' },
      schema: {
        summary: 'The chat batches of this account, newest first, optionally in one state',
        tags: ['ai'],
        querystring: BatchListQuery,
        response: { 200: Page(BatchRecord) },
      },
    },
    async (req: FastifyRequest<{ Querystring: { limit: number; cursor?: string; state?: BatchStateT } }>) => {
      const { limit, cursor, state } = req.query;
      const rows = await d.store.listFor(req.principal!.accountId, limit + 1, decodeCursor(cursor), state);
      return pageOf(rows, limit, (r) => ({ t: Number(r.created_at), id: r.batch_id }), batchRecord);
    }
  );

  app.post(
    '/v1/ai/batches/:id/cancel',
    {
      config: { scope: 'ai', operation: 'ai.batches.cancel', idempotent: true, errors: ['invalid_state'] },
      schema: {
        summary: 'Cancel a queued or running chat batch: nothing is charged, and the vendor is asked to stop it',
        tags: ['ai'],
        params: BatchIdParams,
        body: CancelBody,
        response: { 200: BatchRecord },
      },
      // The body is optional (only `idempotency_key`): a POST without one means `{}`.
      preValidation: async (req) => {
        if (req.body == null) req.body = {};
      },
    },
    async (req: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) =>
      cancelBatch(d, req, reply, req.params.id)
  );
}
