import t from 'tap';
import { sql } from 'kysely';
import { makeApp, activate } from '../../helpers/app.js';
import { Wallet } from '../../../core/wallet/wallet.js';
import { frozenClock } from '../../helpers/clock.js';

// database-independent: SQLite's synchronous path against Kysely's; on PostgreSQL each test passes saying so.

// On SQLite the wallet runs reserve / settle / release as synchronous statements on the
// connection (sync-wallet.ts) unless a Kysely transaction holds it. Both paths must write the
// same books; this runs one script through each and compares. (On PostgreSQL there is only
// the Kysely path, which the rest of the wallet suite covers.)

// `deadline`: a call's holds, which the gateway's wallet keeps in memory on SQLite.
async function script(w: Wallet, acct: string, deadline?: number) {
  const a = await w.reserve(acct, 300_000, 'test.run', deadline);
  await w.settle(a, 120_000, { vendor: 'v', ref: 'r1', quantity: 7 });
  const b = await w.reserve(acct, 50_000, 'test.run', deadline);
  await w.release(b);
  await w.release(b); // twice: nothing more back
  const c = await w.reserve(acct, 10_000, 'test.run', deadline);
  const charged = await w.settle(c, 4_900_000 + 10_000, { vendor: 'v' }); // above the hold: what the balance allows
  const again = await w.settle(c, 1, {});
  await t.rejects(w.reserve(acct, 10_000_000, 'test.run', deadline), { code: 'insufficient_balance' });
  return { charged, again, balance: await w.balance(acct) };
}

async function books(db: any, acct: string) {
  const rows = await db
    .selectFrom('wallet_ledger')
    .select(['amount_micros', 'kind', 'capability', 'vendor', 'quantity'])
    .where('account_id', '=', acct)
    .orderBy('created_at')
    .orderBy('entry_id')
    .execute();
  const holds = await db
    .selectFrom('wallet_holds')
    .select(sql<string>`count(*)`.as('n'))
    .where('account_id', '=', acct)
    .executeTakeFirstOrThrow();
  return {
    rows: rows
      .map((r: any) => ({
        ...r,
        amount_micros: Number(r.amount_micros),
        quantity: r.quantity === null ? null : Number(r.quantity),
      }))
      .sort((x: any, y: any) => x.amount_micros - y.amount_micros),
    holds: Number(holds.n),
  };
}

t.test('the synchronous SQLite path and the Kysely path keep the same books', async (t) => {
  const { app } = await makeApp(t);
  if (app.svc.dialect !== 'sqlite') return t.pass('PostgreSQL has only the Kysely path');
  const one = await activate(app);
  const two = await activate(app);
  const fast = app.svc.wallet; // built with the connection
  const plain = new Wallet(app.svc.db); // Kysely only
  const r1 = await script(fast, one.account_id);
  const r2 = await script(plain, two.account_id);
  t.same(r1, r2);
  t.same(r1, { charged: 4_880_000, again: 0, balance: 0 });
  t.same(await books(app.svc.db, one.account_id), await books(app.svc.db, two.account_id));
});

t.test('holds kept in memory (calls with a deadline) keep the same books as rows', async (t) => {
  const { app } = await makeApp(t);
  if (app.svc.dialect !== 'sqlite') return t.pass('PostgreSQL has only the Kysely path');
  const one = await activate(app);
  const two = await activate(app);
  const deadline = Date.now() + 60_000;
  const r1 = await script(app.svc.wallet, one.account_id, deadline);
  const r2 = await script(new Wallet(app.svc.db), two.account_id, deadline);
  t.same(r1, { charged: 4_880_000, again: 0, balance: 0 });
  t.same(r1, r2);
  t.same(await books(app.svc.db, one.account_id), await books(app.svc.db, two.account_id));
});

t.test('inside an open Kysely transaction the wallet takes the Kysely path (no uncommitted reads)', async (t) => {
  const { app } = await makeApp(t);
  if (app.svc.dialect !== 'sqlite') return t.pass('SQLite only');
  const { account_id: acct } = await activate(app);
  const w = app.svc.wallet;
  const before = await w.balance(acct);
  let inside = -1;
  let outside = -1;
  let reading: Promise<unknown> = Promise.resolve();
  await app.svc.db
    .transaction()
    .execute(async (trx) => {
      await trx.updateTable('wallets').set({ balance_micros: 1 }).where('account_id', '=', acct).execute();
      // Another request reading meanwhile waits for the transaction instead of seeing its write.
      reading = w.balance(acct).then((b) => (outside = b));
      // A few turns of the loop in which a read that did not wait would have answered.
      await new Promise((r) => setTimeout(r, 20));
      inside = outside;
      t.equal(inside, -1, 'the read waited for the transaction');
      throw new Error('roll back');
    })
    .catch(() => undefined);
  await reading;
  t.equal(outside, before, 'and saw the committed balance, not the rolled-back write');
});

t.test(
  'SQLite reuses a balance read for a moment; every wallet write shows at once, a write from elsewhere within 2 s',
  async (t) => {
    const { app } = await makeApp(t);
    if (app.svc.dialect !== 'sqlite') return t.pass('SQLite only: PostgreSQL reads the balance every time');
    const { account_id: acct } = await activate(app);
    const w = app.svc.wallet;
    // Still until moved: how long the reads below take on a loaded machine does not age the cache.
    const clock = frozenClock(t);
    const start = await w.balance(acct);
    await w.credit(acct, 1_000, 'admin', null);
    t.equal(await w.balance(acct), start + 1_000, 'credit');
    await w.debit(acct, 500, 'admin', null);
    t.equal(await w.balance(acct), start + 500, 'debit');
    const hold = await w.reserve(acct, 300, 'test.run');
    t.equal(await w.balance(acct), start + 200, 'reserve');
    await w.settle(hold, 100, {});
    t.equal(await w.balance(acct), start + 400, 'settle');
    const h2 = await w.reserve(acct, 50, 'test.run');
    t.equal(await w.balance(acct), start + 350);
    await w.release(h2);
    t.equal(await w.balance(acct), start + 400, 'release');
    // A write that does not go through the wallet (an operator's sqlite3, say) is seen when the
    // cached read runs out.
    await app.svc.db.updateTable('wallets').set({ balance_micros: 7 }).where('account_id', '=', acct).execute();
    clock.advance(1_999);
    t.equal(await w.balance(acct), start + 400, 'still the cached read');
    clock.advance(1);
    t.equal(await w.balance(acct), 7, 'then the database');
  }
);
