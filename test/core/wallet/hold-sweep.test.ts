import t from 'tap';
import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import { makeApp, activate, DIALECT } from '../../helpers/app.js';
import { STALE_HOLD_MS } from '../../../core/wallet/wallet.js';
import { swept } from './hold-sweep-helpers.js';

const TRIAL = 5_000_000;

/** Held in `wallet_holds` rows and, on SQLite, in the gateway's memory (memory-holds.ts). */
async function held(app: FastifyInstance, accountId: string): Promise<number> {
  const r = await app.svc.db
    .selectFrom('wallet_holds')
    .select(sql<string>`coalesce(sum(amount_micros), 0)`.as('s'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(r.s) + app.svc.wallet.held(accountId);
}

t.test('a running node gives back a hold once its call is past its deadline + grace, without a restart', async (t) => {
  const { app } = await makeApp(t, { wallet: { hold_grace_seconds: 1, hold_sweep_seconds: 1 } });
  const { account_id: acct } = await activate(app);
  const w = app.svc.wallet;
  const start = Date.now();
  const dead = await w.reserve(acct, 700_000, 'test.run', start + 300);
  const live = await w.reserve(acct, 50_000, 'test.run', start + 60_000);
  const row = await app.svc.db
    .selectFrom('wallet_holds')
    .select('expires_at')
    .where('hold_id', '=', dead.holdId)
    .executeTakeFirst();
  // SQLite: one process owns the file and keeps the holds of calls in memory, not as rows.
  if (DIALECT === 'sqlite') t.equal(row, undefined, 'a call with a deadline holds in memory on SQLite');
  else t.equal(Number(row?.expires_at), start + 300 + 1000, 'the expiry is the deadline + hold_grace_seconds');
  t.equal(await held(app, acct), 750_000);

  await swept(app, start + 1301); // the sweep releases holds whose expiry is before its clock
  t.equal(await held(app, acct), 50_000, "only the dead call's hold came back");
  t.equal(await w.balance(acct), TRIAL - 50_000);
  t.equal(await w.settle(dead, 700_000), 0, 'the dead call cannot charge it later');
  t.equal(await w.settle(live, 20_000), 20_000, 'a call within its deadline settles as usual');
  t.equal(await w.balance(acct), TRIAL - 20_000);
});

t.test(
  'a hold without a deadline (a batch) expires STALE_HOLD_MS + grace after it was taken or refreshed',
  async (t) => {
    const { app } = await makeApp(t, { wallet: { hold_grace_seconds: 5 } });
    const { account_id: acct } = await activate(app);
    const before = Date.now();
    const batch = await app.svc.wallet.reserve(acct, 100_000, 'ai.chat.batch');
    const exp = async () =>
      Number(
        (
          await app.svc.db
            .selectFrom('wallet_holds')
            .select('expires_at')
            .where('hold_id', '=', batch.holdId)
            .executeTakeFirstOrThrow()
        ).expires_at
      );
    const first = await exp();
    t.ok(first >= before + STALE_HOLD_MS + 5000 && first <= Date.now() + STALE_HOLD_MS + 5000);
    await new Promise((r) => setTimeout(r, 20));
    t.equal(await app.svc.wallet.refresh(batch), true);
    t.ok((await exp()) > first, 'a refresh moves the expiry on');
  }
);
