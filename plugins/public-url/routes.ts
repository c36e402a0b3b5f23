import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { apiError, idempotentTransaction, ListQuery, type ListQueryT, type Svc } from '../../core/kit/area.js';
import type { PublicUrlConfigT } from './config.js';
import {
  AnonymousBody,
  AnonymousRecord,
  CreateBody,
  IdParams,
  PublicUrlList,
  PublicUrlRecord,
  type AnonymousBodyT,
  type CreateBodyT,
} from './schemas.js';
import type { UrlStore } from './store.js';

const HOUR_MS = 3_600_000;

type Id = { Params: { id: string } };

/** POST/GET /v1/public-url, GET /v1/public-url/{id}, POST …/{id}/claim, POST …/anonymous. */
export function registerUrlRoutes(
  app: FastifyInstance,
  svc: Svc,
  cfg: PublicUrlConfigT,
  urls: UrlStore,
  onClaim: (urlId: string, accountId: string) => void
): void {
  app.post(
    '/v1/public-url',
    {
      config: { scope: 'public-url', idempotent: true, operation: 'tunnels.create', errors: ['already_exists'] },
      schema: {
        summary: 'Reserve a public URL; `svc-gateway tunnel PORT` connects a local port to it',
        tags: ['public-url'],
        body: CreateBody,
        response: { 200: PublicUrlRecord },
      },
    },
    async (req: FastifyRequest<{ Body: CreateBodyT }>, reply: FastifyReply) => {
      const b = req.body;
      const accountId = req.principal!.accountId;
      return idempotentTransaction(svc, req, reply, async (trx) => {
        const { row } = await urls.create(trx, {
          accountId,
          subdomain: b.subdomain,
          port: b.port,
          ttlSeconds: b.ttl_seconds ?? cfg.default_ttl_seconds,
        });
        return urls.wire(row);
      });
    }
  );

  app.post(
    '/v1/public-url/anonymous',
    {
      config: { auth: 'none', operation: 'tunnels.anonymous', errors: ['rate_limited', 'forbidden'] },
      schema: {
        summary: 'A public URL without an account (random subdomain); claim it later into one',
        tags: ['public-url'],
        body: AnonymousBody,
        response: { 200: AnonymousRecord },
      },
    },
    async (req: FastifyRequest<{ Body: AnonymousBodyT }>) => {
      const anon = cfg.anonymous;
      if (!anon.enabled) throw apiError('forbidden', 'Anonymous public URLs are off on this gateway: send an API key.');
      const ttl = req.body.ttl_seconds ?? Math.min(cfg.default_ttl_seconds, anon.max_ttl_seconds);
      if (ttl > anon.max_ttl_seconds)
        throw apiError('validation_failed', `ttl_seconds is at most ${anon.max_ttl_seconds} without an account.`, {
          param: 'ttl_seconds',
        });
      if ((await urls.anonymousSince(req.ip, Date.now() - HOUR_MS)) >= anon.per_ip_per_hour)
        throw apiError('rate_limited', `At most ${anon.per_ip_per_hour} anonymous public URLs an hour per address.`, {
          headers: { 'retry-after': '3600' },
        });
      const made = await svc.db
        .transaction()
        .execute((trx) =>
          urls.create(trx, { accountId: null, port: req.body.port, ttlSeconds: ttl, clientIp: req.ip })
        );
      return { ...urls.wire(made.row), token: made.token! };
    }
  );

  app.get(
    '/v1/public-url/:id',
    {
      config: { scope: 'public-url:read', operation: 'tunnels.get' },
      schema: {
        summary: 'A public URL and its state',
        tags: ['public-url'],
        params: IdParams,
        response: { 200: PublicUrlRecord },
      },
    },
    async (req: FastifyRequest<Id>) => urls.wire(await urls.get(req.principal!.accountId, req.params.id))
  );

  app.get(
    '/v1/public-url',
    {
      config: { scope: 'public-url:read', operation: 'tunnels.list' },
      schema: {
        summary: 'Your public URLs, newest first',
        tags: ['public-url'],
        querystring: Type.Composite([ListQuery], { additionalProperties: false }),
        response: { 200: PublicUrlList },
      },
    },
    async (req: FastifyRequest<{ Querystring: ListQueryT }>) => urls.list(req.principal!.accountId, req.query)
  );

  app.post(
    '/v1/public-url/:id/claim',
    {
      config: { scope: 'public-url', idempotent: true, operation: 'tunnels.claim', errors: ['invalid_state'] },
      schema: {
        summary: 'Take an anonymous public URL into your account',
        tags: ['public-url'],
        params: IdParams,
        response: { 200: PublicUrlRecord },
      },
    },
    async (req: FastifyRequest<Id>, reply: FastifyReply) =>
      idempotentTransaction(svc, req, reply, async (trx) => {
        const row = await urls.claim(req.principal!.accountId, req.params.id, trx);
        onClaim(row.url_id, req.principal!.accountId);
        return urls.wire(row);
      })
  );
}
