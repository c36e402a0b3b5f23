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
  fieldError,
} from '../../core/kit/area.js';
import { KIND, attemptsOf, encodePayload, newestFirst, recordedAttempt, type Deps } from './common.js';
import { nextDelayMs, postSigned } from './outbound.js';
import { checkDeliveryHeaders } from './headers.js';
import type { StoredCredentials } from './delivery-secrets.js';
import { isWebhookSecret } from './signing.js';
import { endpointOf } from './event-endpoints.js';
import {
  Delivery,
  DeliveryCreated,
  IdParams,
  RotateBody,
  RotateResult,
  SecretResult,
  WebhookSendBody,
  type WebhookSendBodyT,
} from './schemas.js';

async function wireDelivery(d: Deps, row: any) {
  const attempts = (await attemptsOf(d.svc.db, [row.delivery_id])).get(row.delivery_id) ?? [];
  return {
    delivery_id: row.delivery_id,
    state: row.state,
    url: row.url,
    ...(row.event_type ? { event_type: row.event_type } : {}),
    max_attempts: Number(row.max_attempts),
    ...(row.next_attempt_at != null && row.state !== 'delivered' && row.state !== 'failed'
      ? { next_attempt_at: iso(Number(row.next_attempt_at)) }
      : {}),
    attempts,
    created_at: iso(Number(row.created_at)),
  };
}

/** Outbound webhooks: send (signed, retried), the delivery record, the account's signing secret. */
export function registerWebhooks(app: FastifyInstance, d: Deps): void {
  const { svc, cfg } = d;

  app.post(
    '/v1/scheduling/webhook/send',
    {
      config: { scope: 'scheduling', operation: 'scheduling.webhook.send', idempotent: true },
      schema: {
        summary: 'Deliver a signed POST with retries (Standard Webhooks)',
        tags: ['scheduling'],
        body: WebhookSendBody,
        response: { 200: DeliveryCreated },
      },
    },
    async (req: FastifyRequest<{ Body: WebhookSendBodyT }>, reply: FastifyReply) => {
      const b = req.body;
      const accountId = req.principal!.accountId;
      const body = encodePayload(b.payload, cfg);
      const maxAttempts = b.max_attempts ?? cfg.retry_schedule_seconds.length;
      if (maxAttempts > cfg.retry_schedule_seconds.length)
        throw fieldError(
          'max_attempts',
          `must be at most ${cfg.retry_schedule_seconds.length}`,
          `max_attempts is at most ${cfg.retry_schedule_seconds.length}, the length of the retry schedule.`
        );
      if (b.secret !== undefined && !isWebhookSecret(b.secret))
        throw fieldError(
          'secret',
          'is not a whsec_ secret',
          'secret must be whsec_ followed by 24 to 64 base64-encoded bytes.'
        );
      checkDeliveryHeaders(b.headers);
      await svc.egress.check(b.url, 'url');
      const now = Date.now();
      const deliveryId = newId('dlv');
      const runAt = now + cfg.retry_schedule_seconds[0] * 1000 * cfg.time_scale;
      return idempotentTransaction(svc, req, reply, async (trx) => {
        await trx
          .insertInto('webhook_deliveries')
          .values({
            delivery_id: deliveryId,
            account_id: accountId,
            url: b.url,
            payload: body,
            event_type: b.event_type ?? null,
            ...d.deliveries.seal({ account_id: accountId, delivery_id: deliveryId }, b),
            state: 'pending',
            max_attempts: maxAttempts,
            next_attempt_at: runAt,
            created_at: now,
            updated_at: now,
          })
          .execute();
        await svc.jobs.enqueue(
          { kind: KIND.webhook, id: deliveryId, payload: { delivery_id: deliveryId }, runAt, maxAttempts },
          trx
        );
        return { delivery_id: deliveryId, state: 'pending' as const };
      });
    }
  );

  app.get(
    '/v1/scheduling/webhook/deliveries/:id',
    {
      config: { scope: 'scheduling:read', operation: 'scheduling.webhook.delivery' },
      schema: {
        summary: 'A delivery with every attempt',
        tags: ['scheduling'],
        params: IdParams,
        response: { 200: Delivery },
      },
    },
    async (req: FastifyRequest<{ Params: { id: string } }>) => {
      const row = await svc.db
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('delivery_id', '=', req.params.id)
        .where('account_id', '=', req.principal!.accountId)
        .executeTakeFirst();
      if (!row) throw apiError('not_found', `No delivery ${req.params.id} in this account.`, { param: 'id' });
      return wireDelivery(d, row);
    }
  );

  app.get(
    '/v1/scheduling/webhook/deliveries',
    {
      config: { scope: 'scheduling:read', operation: 'scheduling.webhook.deliveries' },
      schema: {
        summary: 'Deliveries, newest first',
        tags: ['scheduling'],
        querystring: ListQuery,
        response: { 200: Page(Delivery) },
      },
    },
    async (req: FastifyRequest<{ Querystring: ListQueryT }>) => {
      const rows = await newestFirst(
        svc.db.selectFrom('webhook_deliveries').selectAll().where('account_id', '=', req.principal!.accountId),
        'delivery_id',
        req.query.cursor,
        req.query.limit
      );
      const page = pageOf(
        rows,
        req.query.limit,
        (r: any) => ({ t: Number(r.created_at), id: r.delivery_id }),
        (r) => r
      );
      return { items: await Promise.all(page.items.map((r) => wireDelivery(d, r))), next_cursor: page.next_cursor };
    }
  );

  app.get(
    '/v1/scheduling/webhook/secret',
    {
      config: { scope: 'scheduling', operation: 'scheduling.webhook.secret' },
      schema: {
        summary: "The account's webhook signing secret",
        tags: ['scheduling'],
        response: { 200: SecretResult },
      },
    },
    async (req: FastifyRequest) => {
      const rows = await d.secrets.active(req.principal!.accountId);
      const current = rows.find((r) => r.expires_at === null)!;
      const previous = rows.filter((r) => r.expires_at !== null).map((r) => Number(r.expires_at));
      return {
        secret: current.secret,
        created_at: iso(Number(current.created_at)),
        ...(previous.length ? { previous_expires_at: iso(Math.max(...previous)) } : {}),
      };
    }
  );

  app.post(
    '/v1/scheduling/webhook/secret/rotate',
    {
      config: { scope: 'scheduling', operation: 'scheduling.webhook.secret.rotate' },
      schema: {
        summary: 'A new signing secret; the old one signs alongside it during the grace period',
        tags: ['scheduling'],
        body: RotateBody,
        response: { 200: RotateResult },
      },
    },
    async (req: FastifyRequest<{ Body: { grace_seconds?: number } }>) => {
      const r = await d.secrets.rotate(req.principal!.accountId, req.body?.grace_seconds ?? cfg.secret_grace_seconds);
      return {
        secret: r.current.secret,
        created_at: iso(r.current.created_at),
        old_secret_expires_at: iso(r.oldExpiresAt),
      };
    }
  );
}

/** One delivery attempt. Idempotent by delivery id: a finished delivery is not sent again. */
export function webhookHandler(d: Deps) {
  return async (job: JobContext<{ delivery_id: string }>): Promise<void> => {
    const db = d.svc.db;
    const row = await db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('delivery_id', '=', job.payload.delivery_id)
      .executeTakeFirst();
    if (!row || row.state === 'delivered' || row.state === 'failed') return;
    const own = d.deliveries.open(row as StoredCredentials);
    let secrets = own.secret ? [own.secret] : undefined;
    if (row.endpoint_id) {
      // A gateway event: signed with its endpoint's secret; a deleted endpoint gets nothing more.
      const ep = await endpointOf(db, row.account_id, row.endpoint_id);
      if (!ep) {
        await db
          .updateTable('webhook_deliveries')
          .set({ state: 'failed', next_attempt_at: null, updated_at: Date.now() })
          .where('delivery_id', '=', row.delivery_id)
          .execute();
        return;
      }
      secrets = [d.endpoints.open(ep)];
    }
    secrets ??= await d.secrets.signingSecrets(row.account_id);
    const headers: Record<string, string> = { ...own.headers };
    if (row.event_type) headers['webhook-event-type'] = row.event_type;
    const o = await recordedAttempt(db, row.delivery_id, row.account_id, job.attempt, () =>
      postSigned(d.svc.egress, {
        url: row.url,
        msgId: row.delivery_id,
        body: row.payload,
        secrets,
        headers,
        timeoutMs: d.cfg.delivery_timeout_seconds * 1000,
        signal: job.signal,
        userAgent: d.userAgent,
      })
    );
    const now = Date.now();
    const last = o.stop || job.attempt >= job.maxAttempts;
    const delay = nextDelayMs(d.cfg, job.attempt, o.retryAfterMs);
    const state = o.ok ? 'delivered' : last ? 'failed' : 'retrying';
    await db
      .updateTable('webhook_deliveries')
      .set({ state, next_attempt_at: o.ok || last ? null : now + delay, updated_at: now })
      .where('delivery_id', '=', row.delivery_id)
      .execute();
    if (!o.ok) throw new JobRetry(o.error ?? 'delivery failed', { delayMs: delay, permanent: o.stop });
  };
}
