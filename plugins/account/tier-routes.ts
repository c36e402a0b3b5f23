import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { apiError, fieldError, idempotentTransaction, usdToMicros } from '../../core/kit/area.js';
import { AccountSummary } from './schemas.js';
import { accountSummary } from './summary-routes.js';

export const TierUpgradeBody = Type.Object(
  {
    target_tier: Type.String({
      minLength: 1,
      maxLength: 64,
      examples: ['pro'],
      description: 'A tier id from the gateway config (`tiers:`).',
    }),
    idempotency_key: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  },
  { additionalProperties: false }
);
type TierUpgradeBodyT = Static<typeof TierUpgradeBody>;

/**
 * Move the account to another configured tier. The target tier's price_usd is debited from
 * the wallet in the same transaction as the move, whichever way the move goes (a cheaper
 * tier costs its own price, usually 0, and nothing is refunded: see docs/account.md).
 * The answer (the account after the move) commits with it, so a retry of a move whose answer
 * was lost replays it. The key cache is dropped afterwards so the new rate limit applies from
 * the next request.
 */
export function registerTierRoutes(app: FastifyInstance): void {
  const svc = app.svc;
  app.post(
    '/v1/account/tier/upgrade',
    {
      config: { scope: 'account', operation: 'account.tier.upgrade', idempotent: true },
      schema: {
        summary: "Move the account to another tier; the tier's price is debited from the wallet",
        tags: ['account'],
        body: TierUpgradeBody,
        response: { 200: AccountSummary },
      },
    },
    async (req: FastifyRequest<{ Body: TierUpgradeBodyT }>, reply: FastifyReply) => {
      const p = req.principal!;
      const target = req.body.target_tier;
      const tier = Object.hasOwn(svc.config.tiers, target) ? svc.config.tiers[target] : undefined;
      if (!tier) {
        const known = Object.keys(svc.config.tiers).join(', ');
        const message = `target_tier "${target}" is not a tier of this gateway (${known}).`;
        throw fieldError('target_tier', `must be one of ${known}`, message);
      }
      const price = usdToMicros(tier.price_usd);
      const summary = await idempotentTransaction(svc, req, reply, async (trx) => {
        const a = await trx
          .selectFrom('accounts')
          .select('tier')
          .where('account_id', '=', p.accountId)
          .executeTakeFirstOrThrow();
        if (a.tier === target)
          throw apiError('invalid_state', `The account is already on the ${target} tier.`, { param: 'target_tier' });
        // Conditional on the tier read above: of two concurrent moves only one applies (and pays).
        const moved = await trx
          .updateTable('accounts')
          .set({ tier: target })
          .where('account_id', '=', p.accountId)
          .where('tier', '=', a.tier)
          .executeTakeFirst();
        if (Number(moved.numUpdatedRows) !== 1)
          throw apiError('conflict', 'The tier changed while this request ran; read the account and retry.');
        await svc.wallet.debit(p.accountId, price, 'tier', `tier:${target}`, trx);
        return accountSummary(svc, p.accountId, p.projectId, trx);
      });
      svc.keys.invalidateAccount(p.accountId);
      return summary;
    }
  );
}
