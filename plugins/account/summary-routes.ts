import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { iso, apiError, microsToUsd, type Svc } from '../../core/kit/area.js';
import { AccountSummary, Balance } from './schemas.js';

/** The AccountSummary; read on `db` when given (a transaction that just changed the account). */
export async function accountSummary(svc: Svc, accountId: string, projectId?: string, db: Kysely<any> = svc.db) {
  const a = await db.selectFrom('accounts').selectAll().where('account_id', '=', accountId).executeTakeFirst();
  if (!a) throw apiError('not_found', 'No such account.');
  return {
    account_id: a.account_id,
    kind: a.kind,
    status: a.status,
    tier: a.tier,
    balance_usd: microsToUsd(await svc.wallet.balance(accountId, db)),
    region: a.region,
    ...(projectId ? { project_id: projectId } : {}),
    created_at: iso(Number(a.created_at)),
  };
}

export function registerSummaryRoutes(app: FastifyInstance): void {
  app.get(
    '/v1/account',
    {
      config: { scope: 'account:read', operation: 'account.get' },
      schema: {
        summary: 'The account: kind, status, tier, balance',
        tags: ['account'],
        response: { 200: AccountSummary },
      },
    },
    async (req) => accountSummary(app.svc, req.principal!.accountId, req.principal!.projectId)
  );

  app.get(
    '/v1/account/balance',
    {
      config: { scope: 'account:read', operation: 'account.balance' },
      schema: { summary: 'Wallet balance', tags: ['account'], response: { 200: Balance } },
    },
    async (req) => ({
      balance_usd: microsToUsd(await app.svc.wallet.balance(req.principal!.accountId)),
      currency: app.svc.config.wallet.currency,
    })
  );
}
