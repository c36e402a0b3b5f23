import type { Kysely, Migration } from 'kysely';

const init: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('results')
      .addColumn('result_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('vendor', 'text', (c) => c.notNull())
      .addColumn('object_key', 'text', (c) => c.notNull())
      .addColumn('content_type', 'text', (c) => c.notNull())
      .addColumn('filename', 'text', (c) => c.notNull())
      .addColumn('size', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('delete_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('results_delete_at').on('results').column('delete_at').execute();
  },
};

// Public results (plugins.storage.results_public) live in a bucket of their own, carry their
// Content-Disposition with the object, and may be addressed by the vendor's own object path.
const publicResults: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable('results')
      .addColumn('bucket', 'text', (c) => c.notNull().defaultTo('svc-results'))
      .execute();
    await db.schema.alterTable('results').addColumn('vendor_path', 'text').execute();
    await db.schema.alterTable('results').addColumn('content_disposition', 'text').execute();
  },
};

// Whether a result's bytes were counted in its account's storage usage when saved, so that
// its deletion takes back only what was counted (results saved before, or with no storage
// area to meter them, were not).
const countedResults: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable('results')
      .addColumn('counted', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  },
};

export const resultMigrations: Record<string, Migration> = {
  '0001_init': init,
  '0002_public_results': publicResults,
  '0003_counted_results': countedResults,
};
