import t from 'tap';
import { chargeMarked, type MarkedCharge } from '../../../core/kit/area.js';
import { activate, makeApp } from '../../helpers/app.js';

// chargeMarked, the usage charge storage billing and tunnel metering share: the marks move and
// the wallet is debited together, once however many nodes try, and not at all when the balance
// is short (the same usage is charged on a later run).

t.test('a marked charge: once, all or nothing', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const { db, wallet } = app.svc;
  await db
    .insertInto('storage_usage')
    .values({ account_id: a.account_id, bytes_stored: 0, bytes_served: 300, updated_at: 0 })
    .execute();
  const warned: object[] = [];
  const log = { warn: (obj: object, msg: string) => warned.push({ ...obj, msg }) };
  const marks = async () =>
    Number(
      (
        await db
          .selectFrom('storage_usage')
          .select('served_billed')
          .where('account_id', '=', a.account_id)
          .executeTakeFirstOrThrow()
      ).served_billed
    );
  const charge = (from: number, to: number, micros: number): MarkedCharge => ({
    table: 'storage_usage',
    row: { account_id: a.account_id },
    marks: { served_billed: from },
    next: { served_billed: to },
    accountId: a.account_id,
    micros,
    ref: `test:${to}`,
    capability: 'storage',
  });

  const balance = await wallet.balance(a.account_id);
  t.equal(await chargeMarked(db, wallet, log, 'test charge', charge(0, 100, balance + 1)), 0, 'balance too low');
  t.equal(await marks(), 0, 'the marks stay: charged next run');
  t.equal(await wallet.balance(a.account_id), balance);
  t.match(warned, [
    { account_id: a.account_id, micros: balance + 1, msg: 'test charge: balance too low; charged next run' },
  ]);

  const both = await Promise.all([
    chargeMarked(db, wallet, log, 'test charge', charge(0, 100, 7)),
    chargeMarked(db, wallet, log, 'test charge', charge(0, 100, 7)),
  ]);
  t.same(both.sort(), [0, 7], 'two nodes at once: one charges');
  t.equal(await marks(), 100);
  t.equal(await chargeMarked(db, wallet, log, 'test charge', charge(0, 100, 7)), 0, 'stale marks charge nothing');
  t.equal(await chargeMarked(db, wallet, log, 'test charge', charge(100, 300, 9)), 9);
  t.equal(balance - (await wallet.balance(a.account_id)), 16);
  const ledger = await db
    .selectFrom('wallet_ledger')
    .select(['amount_micros', 'ref', 'capability'])
    .where('account_id', '=', a.account_id)
    .where('kind', '=', 'usage')
    .orderBy('amount_micros', 'desc')
    .execute();
  t.same(
    ledger.map((l) => [Number(l.amount_micros), l.ref, l.capability]),
    [
      [-7, 'test:100', 'storage'],
      [-9, 'test:300', 'storage'],
    ]
  );
});
