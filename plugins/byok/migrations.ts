import type { Kysely, Migration } from 'kysely';

const keys: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('byok_keys')
      .addColumn('byok_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('alias', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('secret', 'text', (c) => c.notNull())
      .addColumn('test_result', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('byok_keys_account').on('byok_keys').columns(['account_id', 'state']).execute();
  },
};

export const byokMigrations: Record<string, Migration> = { '0001_keys': keys };
