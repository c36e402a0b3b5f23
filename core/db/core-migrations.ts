import { SqliteAdapter, sql, type Kysely, type Migration } from 'kysely';

// Tables every call touches: accounts and keys (auth), the wallet, idempotency records.
// Columns are portable between SQLite and PostgreSQL: text, bigint (ms and micro-USD), no
// booleans (integers 0/1), JSON as text.

const init: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('accounts')
      .addColumn('account_id', 'text', (c) => c.primaryKey())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('tier', 'text', (c) => c.notNull())
      .addColumn('region', 'text', (c) => c.notNull())
      .addColumn('device_kind', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('projects')
      .addColumn('project_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.account_id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('api_keys')
      .addColumn('key_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.account_id'))
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('label', 'text', (c) => c.notNull())
      .addColumn('scopes', 'text', (c) => c.notNull())
      .addColumn('hash', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint')
      .addColumn('revoked_at', 'bigint')
      .execute();
    await db.schema.createIndex('api_keys_account').on('api_keys').columns(['account_id', 'created_at']).execute();
    await db.schema
      .createTable('wallets')
      .addColumn('account_id', 'text', (c) => c.primaryKey().references('accounts.account_id'))
      .addColumn('balance_micros', 'bigint', (c) => c.notNull().check(sql`balance_micros >= 0`))
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('wallet_holds')
      .addColumn('hold_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('amount_micros', 'bigint', (c) => c.notNull())
      .addColumn('capability', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('wallet_ledger')
      .addColumn('entry_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('amount_micros', 'bigint', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('ref', 'text')
      .addColumn('capability', 'text')
      .addColumn('vendor', 'text')
      .addColumn('quantity', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('wallet_ledger_account')
      .on('wallet_ledger')
      .columns(['account_id', 'created_at'])
      .execute();
    await db.schema
      .createTable('idempotency_keys')
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('endpoint', 'text', (c) => c.notNull())
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('body_hash', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('status', 'integer')
      .addColumn('response', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('idempotency_keys_pk', ['account_id', 'endpoint', 'key'])
      .execute();
  },
};

// Rotation is a chain: the successor a rotated key was replaced by (at most one).
const keySuccessor: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('api_keys').addColumn('replaced_by', 'text').execute();
  },
};

// Claims and holds of a node that dies mid-request must lapse on their own (issue 13): an
// idempotency claim gets an owner and a lease, a wallet hold the time after which no call can
// still settle it. Rows from before get windows ending from their creation (10 min / 30 min).
const leases: Migration = {
  async up(db: Kysely<any>) {
    // One column a statement: SQLite's ALTER TABLE adds one at a time.
    await db.schema.alterTable('idempotency_keys').addColumn('owner', 'text').execute();
    await db.schema.alterTable('idempotency_keys').addColumn('lease_until', 'bigint').execute();
    await db.updateTable('idempotency_keys').set({ lease_until: sql`created_at + 600000` }).execute();
    await db.schema.alterTable('wallet_holds').addColumn('expires_at', 'bigint').execute();
    await db.updateTable('wallet_holds').set({ expires_at: sql`created_at + 1800000` }).execute();
    await db.schema.createIndex('wallet_holds_expiry').on('wallet_holds').column('expires_at').execute();
  },
};

// SQLite writes each b-tree page a commit changes to the WAL, one frame a page, and a metered
// call commits twice (the wallet's reserve and settle): 12 pages, 25 pwrite calls a call, half
// the gateway's system calls in the ai bench (BENCHMARKS.md, `ai`). Holds and ledger entries are
// keyed by their text ids: WITHOUT ROWID, a row lives in its key's b-tree instead of a rowid
// table plus a key index. The holds' expiry index goes too: the table holds only calls in
// flight and ones a dead process left behind, and the sweep reads it once a minute. 7 pages,
// 16 pwrite calls. PostgreSQL logs rows, not pages: nothing changes there.
const walletPages: Migration = {
  async up(db: Kysely<any>) {
    if (!(db.getExecutor().adapter instanceof SqliteAdapter)) return;
    await db.schema
      .createTable('wallet_holds_new')
      .addColumn('hold_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('amount_micros', 'bigint', (c) => c.notNull())
      .addColumn('capability', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint')
      .modifyEnd(sql`without rowid`)
      .execute();
    await db.schema
      .createTable('wallet_ledger_new')
      .addColumn('entry_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('amount_micros', 'bigint', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('ref', 'text')
      .addColumn('capability', 'text')
      .addColumn('vendor', 'text')
      .addColumn('quantity', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .modifyEnd(sql`without rowid`)
      .execute();
    // Indexes other modules put on the tables (retention's on the ledger) go with the old
    // table: made again from their own SQL, the holds' expiry index excepted.
    const { rows: indexes } = await sql<{ name: string; sql: string }>`select name, sql from sqlite_master
      where type = 'index' and tbl_name in ('wallet_holds', 'wallet_ledger') and sql is not null`.execute(db);
    await sql`insert into wallet_holds_new (hold_id, account_id, amount_micros, capability, created_at, expires_at)
      select hold_id, account_id, amount_micros, capability, created_at, expires_at from wallet_holds`.execute(db);
    await sql`insert into wallet_ledger_new (entry_id, account_id, amount_micros, kind, ref, capability, vendor, quantity,
      created_at) select entry_id, account_id, amount_micros, kind, ref, capability, vendor, quantity, created_at
      from wallet_ledger`.execute(db);
    for (const t of ['wallet_holds', 'wallet_ledger']) {
      await db.schema.dropTable(t).execute();
      await db.schema.alterTable(`${t}_new`).renameTo(t).execute();
    }
    for (const i of indexes) if (i.name !== 'wallet_holds_expiry') await sql.raw(i.sql).execute(db);
  },
};

// Issue 27: a request whose effect is outside the database (a checkout at a payments vendor)
// records what names that effect on its idempotency claim before making it, so the request
// that takes the claim over after a crash makes it again under the same name.
const idempotentAttempts: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('idempotency_keys').addColumn('attempt', 'text').execute();
  },
};

export const coreMigrations: Record<string, Migration> = {
  '0001_init': init,
  '0002_key_successor': keySuccessor,
  '0003_leases': leases,
  '0004_wallet_pages': walletPages,
  '0005_idempotent_attempts': idempotentAttempts,
};
