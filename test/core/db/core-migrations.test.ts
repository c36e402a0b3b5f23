import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openDatabase } from '../../../core/db/open.js';
import { migrateModule } from '../../../core/db/migrate.js';
import { coreMigrations } from '../../../core/db/core-migrations.js';
import { coreModules } from '../../../core/db/core-modules.js';
import { freshDatabaseUrl } from '../../helpers/app.js';

// 0004_wallet_pages rebuilds the wallet's holds and ledger on SQLite (WITHOUT ROWID). A
// gateway that ran before it has rows in both and other modules' indexes on the ledger
// (retention's): all of it must be there after.
t.test("0004_wallet_pages keeps the holds, the ledger and other modules' indexes", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-core-mig-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const database = await openDatabase(await freshDatabaseUrl(t, dir));
  t.teardown(() => database.close());
  const { '0004_wallet_pages': _later, '0005_idempotent_attempts': _last, ...before } = coreMigrations;
  await migrateModule(database, 'core', before);
  for (const m of coreModules.slice(1)) await migrateModule(database, m.name, m.migrations);
  const db = database.db;
  await db
    .insertInto('accounts')
    .values({
      account_id: 'acct_1',
      kind: 'project',
      status: 'active',
      tier: 'free',
      region: 'eu',
      device_kind: 'none',
      created_at: 1,
    })
    .execute();
  await db
    .insertInto('wallet_holds')
    .values({
      hold_id: 'hold_1',
      account_id: 'acct_1',
      amount_micros: 500,
      capability: 'ai.chat',
      created_at: 2,
      expires_at: 3,
    })
    .execute();
  const entries = [
    {
      entry_id: 'led_1',
      account_id: 'acct_1',
      amount_micros: 1000,
      kind: 'trial',
      ref: null,
      capability: null,
      vendor: null,
      quantity: null,
      created_at: 4,
    },
    {
      entry_id: 'led_2',
      account_id: 'acct_1',
      amount_micros: -20,
      kind: 'usage',
      ref: 'r',
      capability: 'ai.chat',
      vendor: 'v',
      quantity: 7,
      created_at: 5,
    },
  ];
  await db.insertInto('wallet_ledger').values(entries).execute();

  t.same(await migrateModule(database, 'core', coreMigrations), [
    'core/0004_wallet_pages',
    'core/0005_idempotent_attempts',
  ]);
  const holds = await db.selectFrom('wallet_holds').selectAll().execute();
  t.same(
    holds.map((h) => ({
      ...h,
      amount_micros: Number(h.amount_micros),
      created_at: Number(h.created_at),
      expires_at: Number(h.expires_at),
    })),
    [
      {
        hold_id: 'hold_1',
        account_id: 'acct_1',
        amount_micros: 500,
        capability: 'ai.chat',
        created_at: 2,
        expires_at: 3,
      },
    ]
  );
  const ledger = await db.selectFrom('wallet_ledger').selectAll().orderBy('entry_id').execute();
  t.same(
    ledger.map((e) => ({
      ...e,
      amount_micros: Number(e.amount_micros),
      created_at: Number(e.created_at),
      quantity: e.quantity === null ? null : Number(e.quantity),
    })),
    entries
  );
  if (database.dialect !== 'sqlite') return;
  const { rows } = await sql<{
    name: string;
    tbl_name: string;
    sql: string | null;
  }>`select name, tbl_name, sql from sqlite_master
    where tbl_name in ('wallet_holds', 'wallet_ledger') order by name`.execute(db);
  t.same(
    rows.filter((r) => r.sql !== null && /^create index/i.test(r.sql)).map((r) => r.name),
    ['wallet_ledger_account', 'wallet_ledger_kind_created'],
    "the ledger's indexes are back; the holds' expiry index is gone"
  );
  t.ok(
    rows.filter((r) => /^create table/i.test(r.sql ?? '')).every((r) => /without rowid$/i.test(r.sql!)),
    'both tables WITHOUT ROWID'
  );
});
