import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  ListQuery,
  decodeCursor,
  pageOf,
  type ListQueryT,
  idempotentTransaction,
  newId,
  recordAttempt,
} from '../../core/kit/area.js';
import { TopupIdParams, TopupList, TopupRecord, topupBody, type TopupBodyT } from './topup-schemas.js';
import { checkCents, getTopup, listTopups, openCheckout, recordTopup, wireTopup } from './topup-service.js';

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
    async (req: FastifyRequest<{ Body: TopupBodyT }>, reply: FastifyReply) => {
      const p = req.principal!;
      checkCents(req.body.amount_usd);
      // The checkout is an effect at the payments vendor: its top-up id is recorded on the
      // idempotency claim before it is opened, so the retry of a request that died after
      // opening it opens the same top-up again (the vendor's reference) and records one row.
      const { topup_id } = await recordAttempt(app.svc, req, () => ({ topup_id: newId('top') }));
      const t = await openCheckout(
        app.svc,
        {
          accountId: p.accountId,
          region: p.region,
          amountUsd: req.body.amount_usd,
          returnUrl: req.body.return_url,
          meter: req.meter,
        },
        topup_id
      );
      return idempotentTransaction(app.svc, req, reply, async (trx) => {
        await recordTopup(trx, t);
        return wireTopup(app.svc, t);
      });
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
