import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import {
  apiError,
  fieldError,
  idempotentTransaction,
  iso,
  ListQuery,
  newId,
  Ok,
  Page,
  pageOf,
  type EventSink,
  type GatewayEvent,
  type ListQueryT,
} from '../../core/kit/area.js';
import { KIND, newestFirst, type Deps } from './common.js';
import { newWebhookSecret } from './signing.js';
import { endpointOf, type EndpointRow, wants, wireEndpoint } from './event-endpoints.js';
import { IdParams } from './schemas.js';
import {
  Endpoint,
  EndpointCreateBody,
  EndpointCreated,
  EventTypes,
  type EndpointCreateBodyT,
} from './events-schemas.js';

/**
 * The gateway's event sink: one webhook delivery per endpoint of the account that takes the
 * type, written in the emitter's transaction and sent by the delivery job (signed, retried,
 * egress-guarded). The delivery id is the `webhook-id`, the same on every retry.
 */
export function eventSink(d: Deps): EventSink {
  return {
    async deliver(trx: Kysely<any>, e: GatewayEvent): Promise<void> {
      const endpoints = (await trx
        .selectFrom('event_endpoints')
        .selectAll()
        .where('account_id', '=', e.accountId)
        .execute()) as EndpointRow[];
      const body = JSON.stringify({ type: e.type, timestamp: iso(e.timestamp), data: e.data });
      const schedule = d.cfg.retry_schedule_seconds;
      for (const ep of endpoints) {
        if (!wants(ep, e.type)) continue;
        const deliveryId = newId('dlv');
        const runAt = e.timestamp + schedule[0] * 1000 * d.cfg.time_scale;
        await trx
          .insertInto('webhook_deliveries')
          .values({
            delivery_id: deliveryId,
            account_id: e.accountId,
            url: ep.url,
            payload: body,
            event_type: e.type,
            endpoint_id: ep.endpoint_id,
            headers: null,
            secret: null,
            state: 'pending',
            max_attempts: schedule.length,
            next_attempt_at: runAt,
            created_at: e.timestamp,
            updated_at: e.timestamp,
          })
          .execute();
        await d.svc.jobs.enqueue(
          {
            kind: KIND.webhook,
            id: deliveryId,
            payload: { delivery_id: deliveryId },
            runAt,
            maxAttempts: schedule.length,
          },
          trx
        );
      }
    },
  };
}

/** `/v1/events/endpoints`: one list of endpoints for the whole gateway's events, and the types there are. */
export function registerEvents(app: FastifyInstance, d: Deps): void {
  const { svc, cfg } = d;
  const secrets = d.endpoints;

  app.get(
    '/v1/events/types',
    {
      config: { scope: 'events:read', operation: 'events.types' },
      schema: { summary: 'The event types the gateway emits', tags: ['events'], response: { 200: EventTypes } },
    },
    async () => ({ items: svc.events.declared() })
  );

  app.post(
    '/v1/events/endpoints',
    {
      config: { scope: 'events', operation: 'events.endpoints.create', idempotent: true },
      schema: {
        summary: 'Register an endpoint for the gateway events (Standard Webhooks); its secret is shown once',
        tags: ['events'],
        body: EndpointCreateBody,
        response: { 200: EndpointCreated },
      },
    },
    async (req: FastifyRequest<{ Body: EndpointCreateBodyT }>, reply: FastifyReply) => {
      const b = req.body;
      const accountId = req.principal!.accountId;
      for (const [i, type] of (b.event_types ?? []).entries())
        if (!svc.events.isDeclared(type))
          throw fieldError(
            `event_types[${i}]`,
            'is not an event type',
            `"${type}" is not an event type of this gateway (GET /v1/events/types).`
          );
      await svc.egress.check(b.url, 'url');
      const endpointId = newId('ep');
      const secret = newWebhookSecret();
      const now = Date.now();
      return idempotentTransaction(svc, req, reply, async (trx) => {
        const n = await trx
          .selectFrom('event_endpoints')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('account_id', '=', accountId)
          .executeTakeFirstOrThrow();
        if (Number(n.n) >= cfg.max_event_endpoints)
          throw apiError(
            'payload_too_large',
            `The account has ${cfg.max_event_endpoints} event endpoints, the most it may have; delete one first.`,
            { details: { max_endpoints: cfg.max_event_endpoints } }
          );
        const row: EndpointRow = {
          endpoint_id: endpointId,
          account_id: accountId,
          url: b.url,
          event_types: b.event_types ? JSON.stringify(b.event_types) : null,
          description: b.description ?? null,
          secret: secrets.seal(accountId, endpointId, secret),
          created_at: now,
        };
        await trx.insertInto('event_endpoints').values(row).execute();
        return { ...wireEndpoint(row), secret };
      });
    }
  );

  app.get(
    '/v1/events/endpoints',
    {
      config: { scope: 'events:read', operation: 'events.endpoints.list' },
      schema: {
        summary: 'Event endpoints, newest first',
        tags: ['events'],
        querystring: ListQuery,
        response: { 200: Page(Endpoint) },
      },
    },
    async (req: FastifyRequest<{ Querystring: ListQueryT }>) => {
      const rows = await newestFirst(
        svc.db.selectFrom('event_endpoints').selectAll().where('account_id', '=', req.principal!.accountId),
        'endpoint_id',
        req.query.cursor,
        req.query.limit
      );
      return pageOf(
        rows,
        req.query.limit,
        (r: any) => ({ t: Number(r.created_at), id: r.endpoint_id }),
        (r: EndpointRow) => wireEndpoint(r)
      );
    }
  );

  const own = async (accountId: string, id: string) => {
    const row = await endpointOf(svc.db, accountId, id);
    if (!row) throw apiError('not_found', `No event endpoint ${id} in this account.`, { param: 'id' });
    return row;
  };

  app.get(
    '/v1/events/endpoints/:id',
    {
      config: { scope: 'events:read', operation: 'events.endpoints.get' },
      schema: { summary: 'An event endpoint', tags: ['events'], params: IdParams, response: { 200: Endpoint } },
    },
    async (req: FastifyRequest<{ Params: { id: string } }>) =>
      wireEndpoint(await own(req.principal!.accountId, req.params.id))
  );

  app.delete(
    '/v1/events/endpoints/:id',
    {
      config: { scope: 'events', operation: 'events.endpoints.delete' },
      schema: {
        summary: 'Delete an event endpoint (its pending deliveries are not sent)',
        tags: ['events'],
        params: IdParams,
        response: { 200: Ok },
      },
    },
    async (req: FastifyRequest<{ Params: { id: string } }>) => {
      const row = await own(req.principal!.accountId, req.params.id);
      await svc.db.deleteFrom('event_endpoints').where('endpoint_id', '=', row.endpoint_id).execute();
      return { ok: true };
    }
  );
}
