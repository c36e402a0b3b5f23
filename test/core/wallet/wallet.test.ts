import t from 'tap';
import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import { makeApp, activate } from '../../helpers/app.js';
import { loadConfig } from '../../../config/load.js';
import { buildApp } from '../../../core/app.js';
import { swept } from './hold-sweep-helpers.js';

const TRIAL = 5_000_000;

/** Put a hold's expiry in the past, as if its call had died with its process. */
const expire = (app: FastifyInstance, holdId: string) =>
  app.svc.db
    .updateTable('wallet_holds')
    .set({ expires_at: Date.now() - 1000 })
    .where('hold_id', '=', holdId)
    .execute();

/** Balance, the sum of the ledger, open holds: the ledger always equals balance + holds. */
async function books(app: FastifyInstance, accountId: string) {
  const db = app.svc.db;
  const balance = await app.svc.wallet.balance(accountId);
  const ledger = await db
    .selectFrom('wallet_ledger')
    .select(sql<string>`coalesce(sum(amount_micros), 0)`.as('s'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  const holds = await db
    .selectFrom('wallet_holds')
    .select(sql<string>`coalesce(sum(amount_micros), 0)`.as('s'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return { balance, ledger: Number(ledger.s), held: Number(holds.s) };
}

async function usageEntries(app: FastifyInstance, accountId: string) {
  const rows = await app.svc.db
    .selectFrom('wallet_ledger')
    .select(['amount_micros', 'vendor', 'capability', 'ref'])
    .where('account_id', '=', accountId)
    .where('kind', '=', 'usage')
    .execute();
  return rows.map((r) => ({ ...r, amount_micros: Number(r.amount_micros) }));
}

t.test('reserve holds the amount; settle charges the actual and gives the rest back', async (t) => {
  const { app } = await makeApp(t);
  const { account_id: acct } = await activate(app);
  const w = app.svc.wallet;
  const hold = await w.reserve(acct, 300_000, 'test.run');
  t.same(await books(app, acct), { balance: TRIAL - 300_000, ledger: TRIAL, held: 300_000 });
  t.equal(await w.settle(hold, 120_000, { vendor: 'v', ref: 'rec_1' }), 120_000);
  t.same(await books(app, acct), { balance: TRIAL - 120_000, ledger: TRIAL - 120_000, held: 0 });
  t.same(await usageEntries(app, acct), [
    { amount_micros: -120_000, vendor: 'v', capability: 'test.run', ref: 'rec_1' },
  ]);
});

t.test('settling twice charges once; release after settle gives nothing back', async (t) => {
  const { app } = await makeApp(t);
  const { account_id: acct } = await activate(app);
  const w = app.svc.wallet;
  const hold = await w.reserve(acct, 100_000, 'test.run');
  const [a, b] = await Promise.all([w.settle(hold, 100_000), w.settle(hold, 100_000)]);
  t.same([a, b].sort(), [0, 100_000]);
  t.equal(await w.settle(hold, 100_000), 0);
  await w.release(hold);
  t.same(await books(app, acct), { balance: TRIAL - 100_000, ledger: TRIAL - 100_000, held: 0 });
  t.equal((await usageEntries(app, acct)).length, 1);
});

t.test('release restores the hold, once', async (t) => {
  const { app } = await makeApp(t);
  const { account_id: acct } = await activate(app);
  const w = app.svc.wallet;
  const hold = await w.reserve(acct, 2_000_000, 'test.run');
  t.equal(await w.balance(acct), TRIAL - 2_000_000);
  await Promise.all([w.release(hold), w.release(hold)]);
  await w.release(hold);
  t.same(await books(app, acct), { balance: TRIAL, ledger: TRIAL, held: 0 });
  t.equal(await w.settle(hold, 2_000_000), 0, 'a released hold cannot be settled');
  t.equal(await w.balance(acct), TRIAL);
});

t.test('settle above the hold takes what the balance allows and never goes negative', async (t) => {
  const { app } = await makeApp(t);
  const { account_id: acct } = await activate(app);
  const w = app.svc.wallet;
  const fits = await w.reserve(acct, 100_000, 'test.run');
  t.equal(await w.settle(fits, 150_000), 150_000, 'above the hold but within the balance: charged in full');
  t.equal(await w.balance(acct), TRIAL - 150_000);

  const hold = await w.reserve(acct, 1_000_000, 'test.run');
  t.equal(await w.settle(hold, 10_000_000), TRIAL - 150_000, 'charged what there was');
  t.same(await books(app, acct), { balance: 0, ledger: 0, held: 0 });
});

t.test('settles above their holds racing for the last of the balance stay exact', async (t) => {
  const { app } = await makeApp(t);
  const { account_id: acct } = await activate(app);
  const w = app.svc.wallet;
  const holds = await Promise.all(Array.from({ length: 20 }, () => w.reserve(acct, 200_000, 'test.run')));
  t.equal(await w.balance(acct), TRIAL - 20 * 200_000);
  // Each wants 300,000 (100,000 above its hold); only 1,000,000 is left for 20 × 100,000.
  const charged = await Promise.all(holds.map((h) => w.settle(h, 300_000)));
  t.equal(
    charged.reduce((a, b) => a + b, 0),
    TRIAL,
    'together they took exactly the balance'
  );
  t.ok(charged.every((c) => c >= 200_000 && c <= 300_000));
  t.same(await books(app, acct), { balance: 0, ledger: 0, held: 0 });
});

t.test('a reservation the balance cannot cover is 402 and changes nothing', async (t) => {
  const { app } = await makeApp(t);
  const { account_id: acct } = await activate(app);
  await t.rejects(app.svc.wallet.reserve(acct, TRIAL + 1, 'test.run'), {
    code: 'insufficient_balance',
    status: 402,
    message: 'Balance 5.000000 USD is below the 5.000001 USD this call reserves. Top up with POST /v1/account/topup.',
    details: { balance_usd: 5, required_usd: 5.000001 },
  });
  t.same(await books(app, acct), { balance: TRIAL, ledger: TRIAL, held: 0 });
});

t.test('holds left by a process that died are given back when the gateway starts', async (t) => {
  const { app, config } = await makeApp(t);
  const { account_id: acct } = await activate(app);
  const w = app.svc.wallet;
  const dead = await w.reserve(acct, 700_000, 'test.run');
  const live = await w.reserve(acct, 50_000, 'test.run');
  await expire(app, dead.holdId);
  await app.close();

  const restarted = Date.now();
  const next = await buildApp(loadConfig({ object: config as unknown as Record<string, unknown>, env: {} }));
  t.teardown(() => next.close());
  await next.ready();
  await swept(next, restarted);
  t.same(
    await books(next, acct),
    { balance: TRIAL - 50_000, ledger: TRIAL, held: 50_000 },
    'only the stale hold came back'
  );
  t.equal(await next.svc.wallet.settle(dead, 700_000), 0, 'the dead call cannot charge it later');
  t.equal(await next.svc.wallet.settle(live, 50_000), 50_000);
  t.same(await books(next, acct), { balance: TRIAL - 50_000, ledger: TRIAL - 50_000, held: 0 });
});

t.test('amounts that are not numbers are refused before they reach the balance', async (t) => {
  const { app } = await makeApp(t);
  const { account_id: acct } = await activate(app);
  const w = app.svc.wallet;
  await t.rejects(w.reserve(acct, Number.NaN, 'test.run'), /wallet reserve: NaN is not an amount of micro-USD/);
  const hold = await w.reserve(acct, 1_000, 'test.run');
  await t.rejects(w.settle(hold, Number.POSITIVE_INFINITY), /wallet settle: Infinity is not an amount/);
  t.same(await books(app, acct), { balance: TRIAL - 1_000, ledger: TRIAL, held: 1_000 }, 'the hold is untouched');
  await w.release(hold);
  t.same(await books(app, acct), { balance: TRIAL, ledger: TRIAL, held: 0 });
});

t.test('a refreshed long-lived hold (a chat batch) is not taken for a stale one', async (t) => {
  const { app, config } = await makeApp(t);
  const { account_id: acct } = await activate(app);
  const w = app.svc.wallet;
  const batch = await w.reserve(acct, 300_000, 'ai.chat.batch');
  await expire(app, batch.holdId);
  t.equal(await w.refresh(batch), true);
  await app.close();

  const restarted = Date.now();
  const next = await buildApp(loadConfig({ object: config as unknown as Record<string, unknown>, env: {} }));
  t.teardown(() => next.close());
  await next.ready();
  await swept(next, restarted);
  t.same(await books(next, acct), { balance: TRIAL - 300_000, ledger: TRIAL, held: 300_000 }, 'still held');
  t.equal(await next.svc.wallet.settle(batch, 120_000), 120_000);
  t.equal(await next.svc.wallet.refresh(batch), false, 'a settled hold is gone');
});

t.test('the sweep gives back only holds still past their expiry: one refreshed while it runs stays held', async (t) => {
  const { app } = await makeApp(t);
  const { account_id: acct } = await activate(app);
  const w = app.svc.wallet;
  // The sweep reads the expired holds, then releases them one by one; a batch's poll may refresh
  // its hold in between (a node restarting past the hold's expiry). Whichever goes first, a
  // refresh that says the hold is there must leave it held.
  for (let i = 0; i < 20; i++) {
    const batch = await w.reserve(acct, 100_000, 'ai.chat.batch');
    await expire(app, batch.holdId);
    const [, refreshed] = await Promise.all([w.releaseExpired(), w.refresh(batch)]);
    const { held } = await books(app, acct);
    t.equal(held, refreshed ? 100_000 : 0, `round ${i}: refresh said ${refreshed}, ${held} held`);
    if (refreshed) await w.release(batch);
  }
  t.same(await books(app, acct), { balance: TRIAL, ledger: TRIAL, held: 0 });
});
