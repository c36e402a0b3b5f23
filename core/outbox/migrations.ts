import type { Kysely, Migration } from 'kysely';

// The outbox: one row a durable send (an email, an SMS), whatever the area. The area's own
// fields are JSON in `data`; `input` is what the send job hands the router, kept until the send
// is final. `attempt_open` is the attempt recorded before a vendor call and cleared with its
// outcome: found set by a later run, it says a node died between the call and its outcome.

const init: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('outbox_records')
      .addColumn('record_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('dedupe_key', 'text')
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('capability', 'text', (c) => c.notNull())
      .addColumn('input', 'text')
      .addColumn('data', 'text', (c) => c.notNull())
      .addColumn('route', 'text', (c) => c.notNull())
      .addColumn('hold_id', 'text')
      .addColumn('hold_micros', 'bigint')
      .addColumn('vendor', 'text')
      .addColumn('vendor_message_id', 'text')
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('attempt_open', 'text')
      .addColumn('cost_micros', 'bigint', (c) => c.notNull())
      .addColumn('error_code', 'text')
      .addColumn('error_message', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('outbox_records_list')
      .on('outbox_records')
      .columns(['account_id', 'kind', 'created_at'])
      .execute();
    await db.schema
      .createIndex('outbox_records_state')
      .on('outbox_records')
      .columns(['account_id', 'kind', 'state', 'created_at'])
      .execute();
    await db.schema
      .createIndex('outbox_records_dedupe')
      .on('outbox_records')
      .columns(['account_id', 'kind', 'dedupe_key'])
      .unique()
      .execute();
    await db.schema
      .createIndex('outbox_records_vendor_message')
      .on('outbox_records')
      .columns(['vendor', 'vendor_message_id'])
      .execute();
  },
};

// Vendor callbacks that came before the send job kept the message id they name (early.ts).
const early: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('outbox_early')
      .addColumn('early_id', 'text', (c) => c.primaryKey())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('vendor', 'text', (c) => c.notNull())
      .addColumn('vendor_message_id', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('received_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('outbox_early_message')
      .on('outbox_early')
      .columns(['vendor', 'vendor_message_id'])
      .execute();
    await db.schema.createIndex('outbox_early_expires').on('outbox_early').column('expires_at').execute();
  },
};

export const outboxMigrations: Record<string, Migration> = { '0001_outbox': init, '0002_outbox_early': early };
