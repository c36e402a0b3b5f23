import t from 'tap';
import { sql } from 'kysely';
import { activate } from '../../helpers/app.js';
import { meterCall, scriptedApp, script } from '../../helpers/scripted-app.js';

// 5 USD of trial credit at 0.10 USD a call pays for exactly 50 calls, however they race.
const PRICE = 100_000;
const CALLS = 200;

t.test(`${CALLS} concurrent metered calls against a wallet that covers 50`, async (t) => {
  const { app } = await scriptedApp(t, [{ id: 'v', price_micros: PRICE }]);
  const acct = await activate(app);
  const responses = await Promise.all(
    Array.from({ length: CALLS }, (_, i) => meterCall(app, acct.auth, { input: `call ${i}` }))
  );

  const ok = responses.filter((r) => r.statusCode === 200);
  const broke = responses.filter((r) => r.statusCode === 402);
  t.equal(ok.length, 50, 'exactly 50 succeed');
  t.equal(broke.length, CALLS - 50, 'every other call is 402');
  t.ok(broke.every((r) => r.json().error.code === 'insufficient_balance'));
  t.equal(script('v').calls.length, 50, 'the vendor was called only for the calls that were paid for');

  const balance = await app.svc.wallet.balance(acct.account_id);
  t.equal(balance, 0, 'exact to the micro-USD');
  const balances = ok.map((r) => Math.round(Number(r.headers['x-svc-balance-usd']) * 1e6));
  t.ok(
    balances.every((b) => b >= 0 && b % PRICE === 0),
    'no response ever saw a negative or odd balance'
  );

  const db = app.svc.db;
  const ledger = await db
    .selectFrom('wallet_ledger')
    .select([sql<string>`sum(amount_micros)`.as('sum'), sql<string>`count(*)`.as('n')])
    .where('account_id', '=', acct.account_id)
    .where('kind', '=', 'usage')
    .executeTakeFirstOrThrow();
  t.equal(Number(ledger.n), 50, 'one usage entry a paid call');
  t.equal(Number(ledger.sum), -50 * PRICE);
  const all = await db
    .selectFrom('wallet_ledger')
    .select(sql<string>`sum(amount_micros)`.as('sum'))
    .where('account_id', '=', acct.account_id)
    .executeTakeFirstOrThrow();
  t.equal(Number(all.sum), balance, 'the ledger sums to the balance');
  const rows = (await db.selectFrom('wallet_holds').selectAll().execute()).length;
  t.equal(rows + app.svc.wallet.holdsInMemory(acct.account_id), 0, 'no hold is left');
});
