import type { Kysely, Migration } from 'kysely';
import { batchesMigration } from './batch/migration.js';

const cache: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('ai_cache')
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('hash', 'text', (c) => c.notNull())
      .addColumn('response', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('ai_cache_pk', ['account_id', 'hash'])
      .execute();
    await db.schema.createIndex('ai_cache_expiry').on('ai_cache').column('expires_at').execute();
  },
};

export const aiMigrations: Record<string, Migration> = { '0001_cache': cache, '0002_batches': batchesMigration };
