import type { Kysely, Migration } from 'kysely';

/** Chat batches: one row a `batch_mode` call, from submit to its result (plugins/ai/batch/). */
export const batchesMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('ai_batches')
      .addColumn('batch_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      // The ChatInput at batch prices, without BYOK credentials (they are read again when used).
      .addColumn('input', 'text', (c) => c.notNull())
      // Candidate instance ids in order, and which of them run on the caller's own key.
      .addColumn('route', 'text', (c) => c.notNull())
      .addColumn('hold_id', 'text', (c) => c.notNull())
      .addColumn('hold_micros', 'bigint', (c) => c.notNull())
      .addColumn('vendor', 'text')
      .addColumn('vendor_batch_id', 'text')
      .addColumn('step', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('result', 'text')
      .addColumn('error', 'text')
      .addColumn('cost_micros', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('completed_at', 'bigint')
      .execute();
    await db.schema.createIndex('ai_batches_account').on('ai_batches').columns(['account_id', 'created_at']).execute();
  },
};
