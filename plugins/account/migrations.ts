import type { Kysely, Migration } from 'kysely';

const topups: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('topups')
      .addColumn('topup_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('amount_micros', 'bigint', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('vendor', 'text', (c) => c.notNull())
      .addColumn('session_id', 'text', (c) => c.notNull().unique())
      .addColumn('checkout_url', 'text', (c) => c.notNull())
      .addColumn('return_url', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('completed_at', 'bigint')
      .execute();
    await db.schema.createIndex('topups_account').on('topups').columns(['account_id', 'created_at']).execute();
  },
};

// The operator's account list pages newest first; without this it sorts the whole table.
const accountsByCreation: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createIndex('accounts_created')
      .ifNotExists()
      .on('accounts')
      .columns(['created_at', 'account_id'])
      .execute();
  },
};

export const accountMigrations: Record<string, Migration> = {
  '0001_topups': topups,
  '0002_accounts_created': accountsByCreation,
};
