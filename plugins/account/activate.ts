import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Svc, newId, apiError, presentedKey, RateLimiter, usdToMicros, microsToUsd } from '../../core/kit/area.js';
import { ActivateBody, ActivateResult, type ActivateBodyT } from './schemas.js';

/** A link to the hosted top-up page for this account, valid 30 days. */
export function topupPageUrl(svc: Svc, accountId: string): string {
  const { token } = svc.tokens.sign('topup-page', { acct: accountId }, 30 * 86400);
  return `${svc.config.server.public_url}/checkout/topup/${token}`;
}

async function createAccount(svc: Svc, body: ActivateBodyT) {
  const t = Date.now();
  const accountId = newId('acct');
  const projectId = newId('proj');
  const trial = usdToMicros(svc.config.wallet.trial_credit_usd);
  const secret = await svc.db.transaction().execute(async (trx) => {
    await trx
      .insertInto('accounts')
      .values({
        account_id: accountId,
        kind: 'anonymous',
        status: 'active',
        tier: svc.config.default_tier,
        region: body.region ?? 'auto',
        device_kind: body.device_kind ?? 'cli',
        created_at: t,
      })
      .execute();
    await trx
      .insertInto('projects')
      .values({ project_id: projectId, account_id: accountId, name: 'default', created_at: t })
      .execute();
    await svc.wallet.open(accountId, trial, trx);
    const { secret } = await svc.keys.create(accountId, projectId, 'primary', ['*'], trx);
    return secret;
  });
  return {
    account_id: accountId,
    project_id: projectId,
    primary_api_key: secret,
    trial_credit_usd: microsToUsd(trial),
    checkout_url: topupPageUrl(svc, accountId),
  };
}

export function registerActivate(app: FastifyInstance): void {
  const perIp = new RateLimiter();
  app.post(
    '/v1/activate',
    {
      config: { auth: 'none', operation: 'account.activate', errors: ['unauthenticated', 'rate_limited'] },
      schema: {
        summary: 'Create an anonymous account with a project key and trial credit',
        description:
          'Needs no key. Called with a valid key, returns that account again (no new account, no second trial credit). Rate limited per client IP.',
        tags: ['account'],
        body: ActivateBody,
        response: { 200: ActivateResult },
      },
    },
    async (req: FastifyRequest<{ Body: ActivateBodyT }>, reply) => {
      const svc = app.svc;
      const presented = presentedKey(req);
      if (presented) {
        const p = await svc.keys.lookup(presented);
        if (!p)
          throw apiError(
            'unauthenticated',
            'The API key is unknown, revoked or expired. Call without a key to create a new account.'
          );
        const trialRow = await svc.db
          .selectFrom('wallet_ledger')
          .select('amount_micros')
          .where('account_id', '=', p.accountId)
          .where('kind', '=', 'trial')
          .executeTakeFirst();
        return {
          account_id: p.accountId,
          project_id: p.projectId,
          primary_api_key: presented,
          trial_credit_usd: microsToUsd(Number(trialRow?.amount_micros ?? 0)),
          checkout_url: topupPageUrl(svc, p.accountId),
        };
      }
      const perHour = svc.config.limits.activate_per_hour;
      const d = perIp.take(`ip:${req.ip}`, { rate_per_minute: perHour / 60, burst: perHour });
      if (!d.allowed) {
        throw apiError(
          'rate_limited',
          `Too many activations from this address (${perHour} an hour). Retry in ${d.retryAfterSeconds} s, or reuse the key you have.`,
          {
            headers: { 'retry-after': String(d.retryAfterSeconds) },
          }
        );
      }
      reply.code(200);
      return createAccount(svc, req.body ?? {});
    }
  );
}
