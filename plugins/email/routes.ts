import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Page } from '../../core/kit/area.js';
import {
  EmailListQuery,
  EmailRecord,
  IdParams,
  RawResult,
  SendBody,
  type EmailListQueryT,
  type SendBodyT,
} from './schemas.js';
import type { EmailService } from './service.js';

type ById = FastifyRequest<{ Params: { id: string } }>;

/** Send, read one, list, and the captured copy. */
export function registerEmailRoutes(app: FastifyInstance, email: EmailService, bodyLimit: number): void {
  app.post(
    '/v1/email/send',
    {
      bodyLimit, // attachments travel as base64 in the JSON body
      config: {
        scope: 'email:send',
        operation: 'email.send',
        capability: 'email.send',
        idempotent: true,
        errors: ['domain_not_verified', 'payload_too_large', 'not_found', 'unprocessable'],
      },
      schema: {
        summary: 'Send an email (accepted into the outbox as queued, then sent)',
        tags: ['email'],
        body: SendBody,
        response: { 200: EmailRecord },
      },
    },
    async (req: FastifyRequest<{ Body: SendBodyT }>, reply: FastifyReply) => email.send(req, reply, req.body)
  );

  app.get(
    '/v1/email/:id',
    {
      config: { scope: 'email:read', operation: 'email.get', errors: ['not_found'] },
      schema: { summary: 'One email record', tags: ['email'], params: IdParams, response: { 200: EmailRecord } },
    },
    async (req: ById) => email.get(req.principal!.accountId, req.params.id)
  );

  app.get(
    '/v1/email',
    {
      config: { scope: 'email:read', operation: 'email.list' },
      schema: {
        summary: 'Email records, newest first',
        tags: ['email'],
        querystring: EmailListQuery,
        response: { 200: Page(EmailRecord) },
      },
    },
    async (req: FastifyRequest<{ Querystring: EmailListQueryT }>) => email.list(req.principal!.accountId, req.query)
  );

  app.get(
    '/v1/email/:id/raw',
    {
      config: { scope: 'email:read', operation: 'email.raw', errors: ['not_found'] },
      schema: {
        summary: 'The RFC 5322 message the capture vendor kept (laptop mode)',
        tags: ['email'],
        params: IdParams,
        response: { 200: RawResult },
      },
    },
    async (req: ById) => ({ id: req.params.id, raw: await email.raw(req.principal!.accountId, req.params.id) })
  );
}
