import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  apiError,
  iso,
  ListQuery,
  decodeCursor,
  pageOf,
  type ListQueryT,
  microsToUsd,
  usdToMicros,
  type Svc,
} from '../../core/kit/area.js';
import {
  AccountIdParams,
  AdminAccount,
  AdminAccountList,
  AdminCreditBody,
  type AdminCreditBodyT,
} from './admin-schemas.js';
import { checkCents } from './topup-service.js';

// The operator's endpoints, behind the admin key from the config (`auth: 'admin'`; with no
// admin key configured they answer 404). They act on any account, by id.

type IdReq = FastifyRequest<{ Params: { account_id: string } }>;

// The wallet's holds kept in memory are still in the balance column: the balance shown
// leaves them out, as it leaves out the holds written to the database.
function wire(svc: Svc, r: any) {
  return {
    account_id: r.account_id,
    kind: r.kind,
    status: r.status,
    tier: r.tier,
    region: r.region,
    balance_usd: microsToUsd(Number(r.balance_micros ?? 0) - svc.wallet.held(r.account_id)),
    created_at: iso(Number(r.created_at)),
  };
}

async function loadAccount(svc: Svc, accountId: string) {
  const r = await svc.db
    .selectFrom('accounts as a')
    .leftJoin('wallets as w', 'w.account_id', 'a.account_id')
    .select(['a.account_id', 'a.kind', 'a.status', 'a.tier', 'a.region', 'a.created_at', 'w.balance_micros'])
    .where('a.account_id', '=', accountId)
    .executeTakeFirst();
  if (!r) throw apiError('not_found', `No account ${accountId}.`, { param: 'account_id' });
  return r;
}

export function registerAdminRoutes(app: FastifyInstance): void {
  const svc = app.svc;
  const admin = { auth: 'admin' as const };

  app.get(
    '/v1/admin/accounts',
    {
      config: { ...admin, operation: 'admin.accounts.list' },
      schema: {
        summary: 'List accounts, newest first (operator)',
        tags: ['admin'],
        querystring: ListQuery,
        response: { 200: AdminAccountList },
      },
    },
    async (req: FastifyRequest<{ Querystring: ListQueryT }>) => {
      const before = decodeCursor(req.query.cursor);
      let q = svc.db
        .selectFrom('accounts as a')
        .leftJoin('wallets as w', 'w.account_id', 'a.account_id')
        .select(['a.account_id', 'a.kind', 'a.status', 'a.tier', 'a.region', 'a.created_at', 'w.balance_micros']);
      if (before)
        q = q.where((eb) =>
          eb.or([
            eb('a.created_at', '<', before.t),
            eb.and([eb('a.created_at', '=', before.t), eb('a.account_id', '<', before.id)]),
          ])
        );
      const rows = await q
        .orderBy('a.created_at', 'desc')
        .orderBy('a.account_id', 'desc')
        .limit(req.query.limit + 1)
        .execute();
      return pageOf(
        rows,
        req.query.limit,
        (r) => ({ t: Number(r.created_at), id: r.account_id }),
        (r) => wire(svc, r)
      );
    }
  );

  app.post(
    '/v1/admin/accounts/:account_id/credit',
    {
      config: { ...admin, operation: 'admin.accounts.credit' },
      schema: {
        summary: "Credit an account's wallet (operator)",
        tags: ['admin'],
        params: AccountIdParams,
        body: AdminCreditBody,
        response: { 200: AdminAccount },
      },
    },
    async (req: FastifyRequest<{ Params: { account_id: string }; Body: AdminCreditBodyT }>) => {
      checkCents(req.body.amount_usd);
      await loadAccount(svc, req.params.account_id);
      const note = req.body.note ? `admin: ${req.body.note}` : 'admin';
      await svc.wallet.credit(req.params.account_id, usdToMicros(req.body.amount_usd), 'admin', note);
      req.log.info({ account_id: req.params.account_id, amount_usd: req.body.amount_usd }, 'admin credit');
      return wire(svc, await loadAccount(svc, req.params.account_id));
    }
  );

  for (const [action, from, to] of [
    ['suspend', 'active', 'suspended'],
    ['resume', 'suspended', 'active'],
  ] as const) {
    app.post(
      `/v1/admin/accounts/:account_id/${action}`,
      {
        config: { ...admin, operation: `admin.accounts.${action}` },
        schema: {
          summary: `${action === 'suspend' ? 'Suspend' : 'Resume'} an account (operator)`,
          tags: ['admin'],
          params: AccountIdParams,
          response: { 200: AdminAccount },
        },
      },
      async (req: IdReq) => {
        const a = await loadAccount(svc, req.params.account_id);
        const res = await svc.db
          .updateTable('accounts')
          .set({ status: to })
          .where('account_id', '=', a.account_id)
          .where('status', '=', from)
          .executeTakeFirst();
        if (Number(res.numUpdatedRows) !== 1)
          throw apiError(
            'invalid_state',
            `The account is ${a.status}; only an ${from} account can be ${action === 'suspend' ? 'suspended' : 'resumed'}.`
          );
        // Cached key lookups carry the status: drop them so the change applies to the next request.
        svc.keys.invalidateAccount(a.account_id);
        req.log.info({ account_id: a.account_id, status: to }, `admin ${action}`);
        return wire(svc, await loadAccount(svc, a.account_id));
      }
    );
  }
}
