import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  idempotentTransaction,
  iso,
  apiError,
  newId,
  JobRetry,
  type JobContext,
  ListQuery,
  Page,
  pageOf,
  type ListQueryT,
  Ok,
  fieldError,
} from '../../core/kit/area.js';
import { KIND, encodePayload, newestFirst, recordedAttempt, type Deps } from './common.js';
import { nextDelayMs, postSigned } from './outbound.js';
import { ack, receive } from './queue-store.js';
import {
  AckBody,
  DeadMessage,
  IdParams,
  PublishBody,
  QueueParams,
  ReceiveBody,
  ReceivedMessage,
  SubscribeBody,
  Subscription,
  type PublishBodyT,
  type ReceiveBodyT,
} from './schemas.js';
import { Type } from '@sinclair/typebox';

const wireSub = (r: any) => ({
  subscription_id: r.subscription_id,
  queue: r.queue,
  url: r.url,
  created_at: iso(Number(r.created_at)),
});

/**
 * The delayed message queue. A queue with push subscriptions delivers each message to every
 * subscribed URL (signed, retried); a queue without is read by pull consumers.
 */
export function registerQueue(app: FastifyInstance, d: Deps): void {
  const { svc, cfg } = d;

  app.post(
    '/v1/scheduling/queue/publish',
    {
      config: { scope: 'scheduling', operation: 'scheduling.queue.publish', idempotent: true },
      schema: {
        summary: 'Publish a message, visible after delay_seconds',
        tags: ['scheduling'],
        body: PublishBody,
        response: { 200: Type.Object({ message_id: Type.String() }) },
      },
    },
    async (req: FastifyRequest<{ Body: PublishBodyT }>, reply: FastifyReply) => {
      const b = req.body;
      const accountId = req.principal!.accountId;
      const delay = b.delay_seconds ?? 0;
      if (delay > cfg.queue_max_delay_seconds)
        throw fieldError(
          'delay_seconds',
          `must be at most ${cfg.queue_max_delay_seconds}`,
          `delay_seconds is at most ${cfg.queue_max_delay_seconds}.`
        );
      const payload = encodePayload(b.payload, cfg);
      const now = Date.now();
      const messageId = newId('msg');
      const visibleAt = now + Math.round(delay * 1000);
      // Read before the transaction: on SQLite a transaction that starts with a write takes the
      // write lock at once (and waits for it), where one that reads first can fail to upgrade.
      const subs = await svc.db
        .selectFrom('queue_subscriptions')
        .select(['subscription_id'])
        .where('account_id', '=', accountId)
        .where('queue', '=', b.queue)
        .execute();
      const message = {
        message_id: messageId,
        account_id: accountId,
        queue: b.queue,
        payload,
        state: subs.length ? 'pushing' : 'ready',
        visible_at: visibleAt,
        receive_count: 0,
        receipt_handle: null,
        dead_reason: null,
        created_at: now,
        updated_at: now,
      };
      const answer = await idempotentTransaction(svc, req, reply, async (trx) => {
        await trx.insertInto('queue_messages').values(message).execute();
        for (const s of subs) {
          await svc.jobs.enqueue(
            {
              kind: KIND.push,
              uniqueKey: `push:${messageId}:${s.subscription_id}`,
              runAt: visibleAt,
              maxAttempts: cfg.retry_schedule_seconds.length,
              payload: { message_id: messageId, subscription_id: s.subscription_id },
            },
            trx
          );
        }
        return { message_id: messageId };
      });
      if (subs.length) svc.jobs.wake();
      return answer;
    }
  );

  app.post(
    '/v1/scheduling/queue/:queue/receive',
    {
      config: { scope: 'scheduling', operation: 'scheduling.queue.receive' },
      schema: {
        summary: 'Receive visible messages; unacked ones reappear after the visibility timeout',
        tags: ['scheduling'],
        params: QueueParams,
        body: ReceiveBody,
        response: { 200: Type.Object({ messages: Type.Array(ReceivedMessage) }) },
      },
    },
    async (req: FastifyRequest<{ Params: { queue: string }; Body: ReceiveBodyT }>) => {
      const vt = (req.body?.visibility_timeout ?? cfg.queue_visibility_timeout_seconds) * 1000;
      const rows = await receive(
        svc.db,
        svc.dialect,
        req.principal!.accountId,
        req.params.queue,
        req.body?.max ?? 1,
        vt,
        cfg.queue_max_receives
      );
      return {
        messages: rows.map((r) => ({
          message_id: r.message_id,
          payload: JSON.parse(r.payload),
          receipt_handle: r.receipt_handle,
          receive_count: Number(r.receive_count),
          published_at: iso(Number(r.created_at)),
        })),
      };
    }
  );

  app.post(
    '/v1/scheduling/queue/:queue/ack',
    {
      config: { scope: 'scheduling', operation: 'scheduling.queue.ack' },
      schema: {
        summary: 'Acknowledge (delete) received messages by receipt handle',
        tags: ['scheduling'],
        params: QueueParams,
        body: AckBody,
        response: { 200: Type.Object({ acked: Type.Integer() }) },
      },
    },
    async (req: FastifyRequest<{ Params: { queue: string }; Body: { receipt_handles: string[] } }>) => {
      return { acked: await ack(svc.db, req.principal!.accountId, req.params.queue, req.body.receipt_handles) };
    }
  );

  app.get(
    '/v1/scheduling/queue/:queue/dead-letter',
    {
      config: { scope: 'scheduling:read', operation: 'scheduling.queue.dead_letter' },
      schema: {
        summary: 'Messages that could not be delivered, newest first',
        tags: ['scheduling'],
        params: QueueParams,
        querystring: ListQuery,
        response: { 200: Page(DeadMessage) },
      },
    },
    async (req: FastifyRequest<{ Params: { queue: string }; Querystring: ListQueryT }>) => {
      const rows = await newestFirst(
        svc.db
          .selectFrom('queue_messages')
          .selectAll()
          .where('account_id', '=', req.principal!.accountId)
          .where('queue', '=', req.params.queue)
          .where('state', '=', 'dead'),
        'message_id',
        req.query.cursor,
        req.query.limit
      );
      return pageOf(
        rows,
        req.query.limit,
        (r: any) => ({ t: Number(r.created_at), id: r.message_id }),
        (r: any) => ({
          message_id: r.message_id,
          payload: JSON.parse(r.payload),
          receive_count: Number(r.receive_count),
          reason: r.dead_reason ?? '',
          published_at: iso(Number(r.created_at)),
        })
      );
    }
  );

  app.post(
    '/v1/scheduling/queue/:queue/subscriptions',
    {
      config: { scope: 'scheduling', operation: 'scheduling.queue.subscribe' },
      schema: {
        summary: 'Push every message of the queue to a URL, signed, with retries',
        tags: ['scheduling'],
        params: QueueParams,
        body: SubscribeBody,
        response: { 200: Subscription },
      },
    },
    async (req: FastifyRequest<{ Params: { queue: string }; Body: { url: string } }>) => {
      await svc.egress.check(req.body.url, 'url');
      const row = {
        subscription_id: newId('sub'),
        account_id: req.principal!.accountId,
        queue: req.params.queue,
        url: req.body.url,
        created_at: Date.now(),
      };
      await svc.db.insertInto('queue_subscriptions').values(row).execute();
      return wireSub(row);
    }
  );

  app.get(
    '/v1/scheduling/queue/:queue/subscriptions',
    {
      config: { scope: 'scheduling:read', operation: 'scheduling.queue.subscriptions' },
      schema: {
        summary: "A queue's push subscriptions",
        tags: ['scheduling'],
        params: QueueParams,
        response: { 200: Type.Object({ items: Type.Array(Subscription) }) },
      },
    },
    async (req: FastifyRequest<{ Params: { queue: string } }>) => {
      const rows = await svc.db
        .selectFrom('queue_subscriptions')
        .selectAll()
        .where('account_id', '=', req.principal!.accountId)
        .where('queue', '=', req.params.queue)
        .orderBy('created_at')
        .execute();
      return { items: rows.map(wireSub) };
    }
  );

  app.delete(
    '/v1/scheduling/queue/subscriptions/:id',
    {
      config: { scope: 'scheduling', operation: 'scheduling.queue.unsubscribe' },
      schema: { summary: 'Stop pushing to a URL', tags: ['scheduling'], params: IdParams, response: { 200: Ok } },
    },
    async (req: FastifyRequest<{ Params: { id: string } }>) => {
      const r = await svc.db
        .deleteFrom('queue_subscriptions')
        .where('subscription_id', '=', req.params.id)
        .where('account_id', '=', req.principal!.accountId)
        .executeTakeFirst();
      if (Number(r.numDeletedRows) !== 1)
        throw apiError('not_found', `No subscription ${req.params.id} in this account.`, { param: 'id' });
      return { ok: true };
    }
  );
}

/** One push of a message to one subscription; the message id is the webhook-id, so receivers de-duplicate. */
export function pushHandler(d: Deps) {
  return async (job: JobContext<{ message_id: string; subscription_id: string }>): Promise<void> => {
    const db = d.svc.db;
    const msg = await db
      .selectFrom('queue_messages')
      .selectAll()
      .where('message_id', '=', job.payload.message_id)
      .executeTakeFirst();
    const sub = await db
      .selectFrom('queue_subscriptions')
      .selectAll()
      .where('subscription_id', '=', job.payload.subscription_id)
      .executeTakeFirst();
    if (!msg || !sub) return;
    const secrets = await d.secrets.signingSecrets(msg.account_id);
    const refId = `${msg.message_id}:${sub.subscription_id}`;
    const o = await recordedAttempt(db, refId, msg.account_id, job.attempt, () =>
      postSigned(d.svc.egress, {
        url: sub.url,
        msgId: msg.message_id,
        body: msg.payload,
        secrets,
        headers: { 'webhook-event-type': `queue.${msg.queue}` },
        timeoutMs: d.cfg.delivery_timeout_seconds * 1000,
        signal: job.signal,
        userAgent: d.userAgent,
      })
    );
    if (o.ok) {
      await db
        .updateTable('queue_messages')
        .set({ state: 'delivered', updated_at: Date.now() })
        .where('message_id', '=', msg.message_id)
        .where('state', '=', 'pushing')
        .execute();
      return;
    }
    if (o.stop || job.attempt >= job.maxAttempts) {
      await db
        .updateTable('queue_messages')
        .set({
          state: 'dead',
          dead_reason: `push to ${sub.url} failed: ${o.error}`.slice(0, 500),
          updated_at: Date.now(),
        })
        .where('message_id', '=', msg.message_id)
        .execute();
    }
    throw new JobRetry(o.error ?? 'push failed', {
      delayMs: nextDelayMs(d.cfg, job.attempt, o.retryAfterMs),
      permanent: o.stop,
    });
  };
}
