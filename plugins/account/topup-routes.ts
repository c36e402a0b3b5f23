import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ListQuery, decodeCursor, pageOf, type ListQueryT } from '../../core/http/pagination.js';
import { TopupIdParams, TopupList, TopupRecord, topupBody, type TopupBodyT } from './topup-schemas.js';
import { createTopup, getTopup, listTopups, wireTopup } from './topup-service.js';

/** Wallet top-ups through a hosted checkout: the API never sees card data. */
export function registerTopupRoutes(app: FastifyInstance): void {
  const { topup_min_usd: min, topup_max_usd: max } = app.svc.config.wallet;

  app.post(
    '/v1/account/topup',
    {
      config: { scope: 'account', operation: 'account.topup', idempotent: true, capability: 'payments.checkout' },
      schema: {
        summary: 'Start a wallet top-up; returns the hosted checkout to open',
        description:
          'The top-up is pending until the checkout is paid (the wallet is credited once), canceled, or expires.',
        tags: ['account'],
        body: topupBody(min, max),
        response: { 200: TopupRecord },
      },
    },
    async (req: FastifyRequest<{ Body: TopupBodyT }>) => {
      const p = req.principal!;
      const t = await createTopup(app.svc, {
        accountId: p.accountId,
        region: p.region,
        amountUsd: req.body.amount_usd,
        returnUrl: req.body.return_url,
        meter: req.meter,
      });
      return wireTopup(app.svc, t);
    }
  );

  app.get(
    '/v1/account/topups',
    {
      config: { scope: 'account:read', operation: 'account.topups.list' },
      schema: {
        summary: 'List top-ups, newest first',
        tags: ['account'],
        querystring: ListQuery,
        response: { 200: TopupList },
      },
    },
    async (req: FastifyRequest<{ Querystring: ListQueryT }>) => {
      const rows = await listTopups(
        app.svc,
        req.principal!.accountId,
        req.query.limit + 1,
        decodeCursor(req.query.cursor)
      );
      return pageOf(
        rows,
        req.query.limit,
        (r) => ({ t: r.created_at, id: r.topup_id }),
        (r) => wireTopup(app.svc, r)
      );
    }
  );

  app.get(
    '/v1/account/topups/:topup_id',
    {
      config: { scope: 'account:read', operation: 'account.topups.get' },
      schema: {
        summary: 'One top-up and its state',
        tags: ['account'],
        params: TopupIdParams,
        response: { 200: TopupRecord },
      },
    },
    async (req: FastifyRequest<{ Params: { topup_id: string } }>) =>
      wireTopup(app.svc, await getTopup(app.svc, req.principal!.accountId, req.params.topup_id))
  );
}
