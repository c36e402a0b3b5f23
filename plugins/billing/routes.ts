import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Page } from '../../core/kit/area.js';
import type { Charges } from './charges.js';
import type { Refunds } from './refunds.js';
import {
  Charge,
  ChargeBody,
  ChargeListQuery,
  IdParams,
  Refund,
  RefundBody,
  RefundListQuery,
  type ChargeBodyT,
  type ChargeListQueryT,
  type RefundBodyT,
  type RefundListQueryT,
} from './schemas.js';

type ById = FastifyRequest<{ Params: { id: string } }>;

/** Charges and refunds of the caller's end customers. */
export function registerBillingRoutes(app: FastifyInstance, charges: Charges, refunds: Refunds): void {
  app.post(
    '/v1/billing/charges',
    {
      config: {
        scope: 'billing',
        operation: 'billing.charges.create',
        capability: 'payments.charge',
        idempotent: true,
        errors: ['unprocessable'],
      },
      schema: {
        summary: "Charge an end customer's saved payment method",
        description:
          'The answer is the Charge: `succeeded`, `failed` (a decline, with `error.code` and `error.decline_code`), '
          + '`requires_action` (the payer authenticates at `next_action_url`) or `pending` (settles later; '
          + 'an event says when).',
        tags: ['billing'],
        body: ChargeBody,
        response: { 200: Charge },
      },
    },
    async (req: FastifyRequest<{ Body: ChargeBodyT }>, reply: FastifyReply) => charges.create(req, reply, req.body)
  );

  app.get(
    '/v1/billing/charges/:id',
    {
      config: { scope: 'billing:read', operation: 'billing.charges.get', errors: ['not_found'] },
      schema: { summary: 'One charge', tags: ['billing'], params: IdParams, response: { 200: Charge } },
    },
    async (req: ById) => charges.get(req.principal!.accountId, req.params.id)
  );

  app.get(
    '/v1/billing/charges',
    {
      config: { scope: 'billing:read', operation: 'billing.charges.list' },
      schema: {
        summary: 'Charges, newest first',
        tags: ['billing'],
        querystring: ChargeListQuery,
        response: { 200: Page(Charge) },
      },
    },
    async (req: FastifyRequest<{ Querystring: ChargeListQueryT }>) => charges.list(req.principal!.accountId, req.query)
  );

  app.post(
    '/v1/billing/refunds',
    {
      config: {
        scope: 'billing',
        operation: 'billing.refunds.create',
        capability: 'payments.refund',
        idempotent: true,
        errors: ['not_found', 'invalid_state', 'unprocessable'],
      },
      schema: {
        summary: 'Refund all or part of a charge',
        description:
          'Refunds of a charge never add up to more than it: one above what is left is 422 `unprocessable`, '
          + 'also when several race.',
        tags: ['billing'],
        body: RefundBody,
        response: { 200: Refund },
      },
    },
    async (req: FastifyRequest<{ Body: RefundBodyT }>, reply: FastifyReply) => refunds.create(req, reply, req.body)
  );

  app.get(
    '/v1/billing/refunds',
    {
      config: { scope: 'billing:read', operation: 'billing.refunds.list' },
      schema: {
        summary: 'Refunds, newest first',
        tags: ['billing'],
        querystring: RefundListQuery,
        response: { 200: Page(Refund) },
      },
    },
    async (req: FastifyRequest<{ Querystring: RefundListQueryT }>) => refunds.list(req.principal!.accountId, req.query)
  );

  app.get(
    '/v1/billing/refunds/:id',
    {
      config: { scope: 'billing:read', operation: 'billing.refunds.get', errors: ['not_found'] },
      schema: { summary: 'One refund', tags: ['billing'], params: IdParams, response: { 200: Refund } },
    },
    async (req: ById) => refunds.get(req.principal!.accountId, req.params.id)
  );
}
