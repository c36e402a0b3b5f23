import t from 'tap';
import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import { makeApp, activate, DIALECT } from '../../helpers/app.js';
import { buildApp } from '../../../core/app.js';

// On SQLite the holds of calls with a deadline live in the gateway's memory (memory-holds.ts),
// not in wallet_holds; on PostgreSQL they are rows. What a user sees must not differ.

const TRIAL = 5_000_000;
const ADMIN = 'operator-secret-0123456789';
const soon = () => Date.now() + 60_000;

async function rows(app: FastifyInstance, accountId: string): Promise<number> {
  const r = await app.svc.db
    .selectFrom('wallet_holds')
    .select(sql<string>`count(*)`.as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

async function shown(app: FastifyInstance, key: { authorization: string }, accountId: string) {
  const own = (await app.inject({ method: 'GET', url: '/v1/account/balance', headers: key })).json();
  const admin = (
    await app.inject({
      method: 'GET',
      url: `/v1/admin/accounts?limit=100`,
      headers: { authorization: `Bearer ${ADMIN}` },
    })
  ).json();
  const item = admin.items.find((a: any) => a.account_id === accountId);
  return { own: own.balance_usd as number, admin: item.balance_usd as number };
}

t.test('a held call is out of the balance shown, covers no other call, and settles once', async (t) => {
  const { app } = await makeApp(t, { admin_key: ADMIN });
  const a = await activate(app);
  const w = app.svc.wallet;
  const hold = await w.reserve(a.account_id, 1_000_000, 'test.run', soon());
  t.equal(await rows(app, a.account_id), DIALECT === 'sqlite' ? 0 : 1, `${DIALECT}: where the hold lives`);
  t.same(await shown(app, a.auth, a.account_id), { own: 4, admin: 4 }, 'the balance shown leaves the hold out');

  await t.rejects(w.reserve(a.account_id, 4_000_001, 'test.run', soon()), { code: 'insufficient_balance' });
  const rest = await w.reserve(a.account_id, 4_000_000, 'test.run', soon());
  t.equal(await w.balance(a.account_id), 0, 'the last of the balance held');
  await t.rejects(w.debit(a.account_id, 1, 'admin', null), { code: 'insufficient_balance' }, 'a debit spares holds');
  await w.release(rest);
  await w.release(rest);
  t.equal(await w.balance(a.account_id), 4_000_000, 'released once');

  t.equal(await w.settle(hold, 250_000, { vendor: 'v' }), 250_000);
  t.equal(await w.settle(hold, 250_000), 0, 'settled once');
  await w.release(hold);
  t.equal(await w.balance(a.account_id), TRIAL - 250_000);
  t.same(await shown(app, a.auth, a.account_id), { own: 4.75, admin: 4.75 });
  t.equal(await rows(app, a.account_id), 0);
  const usage = await app.svc.db
    .selectFrom('wallet_ledger')
    .select(['amount_micros', 'vendor'])
    .where('account_id', '=', a.account_id)
    .where('kind', '=', 'usage')
    .execute();
  t.same(
    usage.map((r) => ({ ...r, amount_micros: Number(r.amount_micros) })),
    [{ amount_micros: -250_000, vendor: 'v' }]
  );
});

t.test('a charge above its hold takes what other holds leave, and no more', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const w = app.svc.wallet;
  const one = await w.reserve(a.account_id, 1_000_000, 'test.run', soon());
  const other = await w.reserve(a.account_id, 3_000_000, 'test.run', soon());
  t.equal(await w.settle(one, 9_000_000), 2_000_000, 'its hold and the 1 USD no other hold has');
  t.equal(await w.balance(a.account_id), 0);
  t.equal(await w.settle(other, 3_000_000), 3_000_000, 'the other hold was left whole');
  t.equal(await w.balance(a.account_id), 0);
});

t.test('a settle while a Kysely transaction holds the connection waits for it and charges once', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const w = app.svc.wallet;
  const hold = await w.reserve(a.account_id, 500_000, 'test.run', soon());
  let settling: Promise<number> | undefined;
  await app.svc.db.transaction().execute(async (trx) => {
    settling = w.settle(hold, 200_000); // the connection is not free: the Kysely path, after this commits
    await trx.selectFrom('wallets').select('balance_micros').execute();
  });
  t.equal(await settling, 200_000);
  t.equal(await w.settle(hold, 200_000), 0);
  t.equal(await w.balance(a.account_id), TRIAL - 200_000);
});

t.test('a restart forgets the holds kept in memory: nothing is charged for them', async (t) => {
  const { app, config } = await makeApp(t);
  const a = await activate(app);
  await app.svc.wallet.reserve(a.account_id, 700_000, 'test.run', soon());
  await app.close();
  const next = await buildApp(config);
  t.teardown(() => next.close());
  await next.ready();
  // PostgreSQL: the row outlives the process until the sweep gives it back past its expiry.
  t.equal(await next.svc.wallet.balance(a.account_id), DIALECT === 'sqlite' ? TRIAL : TRIAL - 700_000);
});

t.test('a charge not yet written counts as held: nothing can spend it meanwhile', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const w = app.svc.wallet;
  const hold = await w.reserve(a.account_id, TRIAL, 'test.run', soon());
  t.equal(await w.settle(hold, TRIAL), TRIAL);
  // SQLite: the charge waits for the next turn of the event loop (charge-queue.ts).
  t.equal(w.held(a.account_id), DIALECT === 'sqlite' ? TRIAL : 0, 'pending until written');
  t.equal(await w.balance(a.account_id), 0);
  await t.rejects(w.reserve(a.account_id, 1, 'test.run', soon()), { code: 'insufficient_balance' });
  await new Promise((r) => setImmediate(r));
  t.equal(w.held(a.account_id), 0, 'written');
  t.equal(await w.balance(a.account_id), 0);
  await w.credit(a.account_id, 1_000, 'admin', null);
  t.equal(await w.balance(a.account_id), 1_000, 'exact after the write');
});
