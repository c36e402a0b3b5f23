import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { apiError, defineArea, idempotentTransaction, iso, ListQuery, type OutboxRecord } from '../../core/kit/area.js';

// A tiny area on the outbox, for the outbox and event tests: `POST /v1/outboxtest/send` accepts
// a message into the outbox (capability `test.message`, served by test/helpers/outbox-vendor.ts),
// GET reads and lists records, and `POST /v1/outboxtest/:id/status` stands in for a vendor's
// status callback (delivered, bounced). Loaded by path: `plugins: { './outbox-area.ts': {} }`.

export interface TestData {
  to: string;
  segments?: number;
}

export const TEST_EVENTS = {
  'outboxtest.sent': 'A test message was accepted by its vendor.',
  'outboxtest.delivered': 'A test message was delivered.',
  'outboxtest.bounced': 'A test message bounced.',
  'outboxtest.failed': 'A test message could not be sent.',
  'outboxtest.suppressed': 'A test message was not sent: its recipient opted out.',
};

const wire = (r: OutboxRecord<TestData>) => ({
  message_id: r.id,
  state: r.state,
  to: r.data.to,
  ...(r.data.segments !== undefined ? { segments: r.data.segments } : {}),
  vendor: r.vendor,
  attempts: r.attempts,
  cost_micros: r.costMicros,
  error: r.error,
  created_at: iso(r.createdAt),
});

export default defineArea({
  name: 'outboxtest',
  capabilities: { 'test.message': { idempotent: false, description: 'Sends a message: never twice.' } },
  register(app, ctx) {
    const svc = ctx.svc;
    svc.events.declare(TEST_EVENTS);
    const box = svc.outbox.register<TestData, { to: string }, { id: string; segments: number }>({
      kind: 'testmsg',
      idPrefix: 'tm',
      capability: 'test.message',
      states: { queued: 'queued', sent: 'sent', failed: 'failed' },
      moves: { sent: ['delivered', 'bounced'], delivered: ['bounced'] },
      events: {
        sent: 'outboxtest.sent',
        delivered: 'outboxtest.delivered',
        bounced: 'outboxtest.bounced',
        failed: 'outboxtest.failed',
        suppressed: 'outboxtest.suppressed',
      },
      eventData: wire,
      vendorMessageId: (o) => o.id,
      onSent: (o) => ({ segments: o.segments }),
      maxAttempts: 3,
      backoffMs: (n) => 60_000 * n,
    });

    app.post(
      '/v1/outboxtest/send',
      {
        config: { scope: 'outboxtest', idempotent: true },
        schema: {
          body: Type.Object(
            {
              to: Type.String({ minLength: 1 }),
              vendor: Type.Optional(Type.String()),
              idempotency_key: Type.Optional(Type.String()),
            },
            { additionalProperties: false }
          ),
        },
      },
      async (req: FastifyRequest<{ Body: { to: string; vendor?: string } }>, reply: FastifyReply) => {
        const p = req.principal!;
        // Planned before the transaction: a planner may read the database (the caller's keys).
        const route = await box.plan({ accountId: p.accountId, region: p.region, vendor: req.body.vendor });
        return idempotentTransaction(svc, req, reply, async (trx) => {
          const { record } = await box.accept(trx, {
            accountId: p.accountId,
            region: p.region,
            vendor: req.body.vendor,
            input: { to: req.body.to },
            data: { to: req.body.to },
            route,
          });
          return wire(record);
        });
      }
    );

    app.get(
      '/v1/outboxtest',
      {
        config: { scope: 'outboxtest' },
        schema: {
          querystring: Type.Object(
            { ...ListQuery.properties, state: Type.Optional(Type.String()) },
            { additionalProperties: false }
          ),
        },
      },
      async (req: FastifyRequest<{ Querystring: { state?: string; limit: number; cursor?: string } }>) => {
        const page = await box.list(req.principal!.accountId, req.query);
        return { items: page.items.map(wire), next_cursor: page.next_cursor };
      }
    );

    app.get(
      '/v1/outboxtest/:id',
      { config: { scope: 'outboxtest' } },
      async (req: FastifyRequest<{ Params: { id: string } }>) =>
        wire(await box.get(req.principal!.accountId, req.params.id))
    );

    app.post(
      '/v1/outboxtest/:id/status',
      { config: { scope: 'outboxtest' } },
      async (req: FastifyRequest<{ Params: { id: string }; Body: { state: string } }>) => {
        const cur = await box.get(req.principal!.accountId, req.params.id);
        return svc.db.transaction().execute(async (trx) => {
          const r = await box.move(trx, cur.id, req.body.state);
          if (!r.moved) throw apiError('invalid_state', `A ${cur.state} message cannot become ${req.body.state}.`);
          return wire(r.record!);
        });
      }
    );
  },
});
