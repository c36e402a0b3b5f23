import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { idempotentTransaction, ListQuery, type ListQueryT, type Svc } from '../../core/kit/area.js';
import type { DomainStore } from './domains.js';
import { DomainBody, DomainList, DomainRecord, IdParams, type DomainBodyT } from './schemas.js';

type Id = { Params: { id: string } };

/** POST/GET /v1/public-url/domains, GET …/domains/{id}, POST …/domains/{id}/verify. */
export function registerDomainRoutes(app: FastifyInstance, svc: Svc, domains: DomainStore): void {
  app.post(
    '/v1/public-url/domains',
    {
      config: {
        scope: 'public-url',
        idempotent: true,
        operation: 'tunnels.domains.create',
        errors: ['already_exists'],
      },
      schema: {
        summary: 'Bind a custom domain to a public URL (pending until its TXT record is verified)',
        tags: ['public-url'],
        body: DomainBody,
        response: { 200: DomainRecord },
      },
    },
    async (req: FastifyRequest<{ Body: DomainBodyT }>, reply: FastifyReply) =>
      idempotentTransaction(svc, req, reply, (trx) =>
        domains.create(trx, req.principal!.accountId, req.body.domain, req.body.url_id)
      )
  );

  app.get(
    '/v1/public-url/domains',
    {
      config: { scope: 'public-url:read', operation: 'tunnels.domains.list' },
      schema: {
        summary: 'Your custom domains, newest first',
        tags: ['public-url'],
        querystring: Type.Composite([ListQuery], { additionalProperties: false }),
        response: { 200: DomainList },
      },
    },
    async (req: FastifyRequest<{ Querystring: ListQueryT }>) => domains.list(req.principal!.accountId, req.query)
  );

  app.get(
    '/v1/public-url/domains/:id',
    {
      config: { scope: 'public-url:read', operation: 'tunnels.domains.get' },
      schema: { summary: 'A custom domain', tags: ['public-url'], params: IdParams, response: { 200: DomainRecord } },
    },
    async (req: FastifyRequest<Id>) => domains.get(req.principal!.accountId, req.params.id)
  );

  app.post(
    '/v1/public-url/domains/:id/verify',
    {
      config: { scope: 'public-url', operation: 'tunnels.domains.verify', errors: ['already_exists'] },
      schema: {
        summary: 'Look the TXT record up now: verified, or failed until it is published',
        tags: ['public-url'],
        params: IdParams,
        response: { 200: DomainRecord },
      },
    },
    async (req: FastifyRequest<Id>) => domains.verify(req.principal!.accountId, req.params.id)
  );
}
