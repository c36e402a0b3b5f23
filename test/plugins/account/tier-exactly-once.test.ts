import t from 'tap';
import { makeApp, activate } from '../../helpers/app.js';
import { checkExactlyOnce } from '../../helpers/exactly-once.js';

// Issue 27: a tier move, its debit and its stored answer commit together, so a retry of a
// move whose answer was lost replays it instead of answering 409 for the tier it now has.

const tiers = {
  free: { rate_per_minute: 1_000_000, burst: 100_000, price_usd: 0 },
  pro: { rate_per_minute: 1_000_000, burst: 100_000, price_usd: 3 },
  max: { rate_per_minute: 1_000_000, burst: 100_000, price_usd: 4 },
};

t.test('POST /v1/account/tier/upgrade is exactly once', async (t) => {
  const { app } = await makeApp(t, { tiers });
  const a = await activate(app);
  const move = (tier: string) => (key: string) => ({
    method: 'POST' as const,
    url: '/v1/account/tier/upgrade',
    headers: a.auth,
    payload: { target_tier: tier, idempotency_key: key },
  });
  await checkExactlyOnce(t, app, {
    request: move('pro'),
    other: move('max'),
    state: async () => ({
      tier: (await app.svc.db.selectFrom('accounts').select('tier').where('account_id', '=', a.account_id).execute())[0]
        .tier,
      balance: await app.svc.wallet.balance(a.account_id),
      ledger: await app.svc.db
        .selectFrom('wallet_ledger')
        .select(['amount_micros', 'ref'])
        .where('account_id', '=', a.account_id)
        .where('kind', '=', 'tier')
        .execute(),
    }),
    answered: (t, body) => t.match(body, { tier: 'pro', balance_usd: 2 }),
  });
});
