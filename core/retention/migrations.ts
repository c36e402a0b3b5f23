import type { Kysely, Migration } from 'kysely';

// What retention keeps of the wallet's usage entries once they are deleted: their sums per
// account, UTC day (days since the epoch) and capability ('other' when the entry had none,
// as GET /v1/account/usage names it). `micros` is the entries' sum (negative: money taken).

const init: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('wallet_usage_daily')
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('day', 'bigint', (c) => c.notNull())
      .addColumn('capability', 'text', (c) => c.notNull())
      .addColumn('micros', 'bigint', (c) => c.notNull())
      .addColumn('calls', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('wallet_usage_daily_pk', ['account_id', 'day', 'capability'])
      .execute();
    // The sweep picks the oldest usage entries; without this it would scan the ledger each batch.
    await db.schema
      .createIndex('wallet_ledger_kind_created')
      .on('wallet_ledger')
      .columns(['kind', 'created_at'])
      .execute();
    await db.schema.createIndex('jobs_finished').on('jobs').columns(['state', 'updated_at']).execute();
  },
};

export const retentionMigrations: Record<string, Migration> = { '0001_retention': init };
