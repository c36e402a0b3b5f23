import type { Kysely, Migration } from 'kysely';

const initial: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('billing_charges')
      .addColumn('charge_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('amount', 'bigint', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      // Refunds not failed (pending and succeeded): the one conditional UPDATE that adds a refund
      // to it is what keeps their sum within `amount` under concurrent refunds.
      .addColumn('amount_refunded', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('customer_id', 'text')
      .addColumn('payment_method_id', 'text', (c) => c.notNull())
      .addColumn('vendor', 'text', (c) => c.notNull())
      .addColumn('vendor_ref', 'text', (c) => c.notNull())
      .addColumn('next_action_url', 'text')
      .addColumn('failure_code', 'text')
      .addColumn('decline_code', 'text')
      .addColumn('failure_message', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('billing_charges_account')
      .on('billing_charges')
      .columns(['account_id', 'created_at', 'charge_id'])
      .execute();
    await db.schema
      .createIndex('billing_charges_vendor_ref')
      .unique()
      .on('billing_charges')
      .columns(['vendor', 'vendor_ref'])
      .execute();

    await db.schema
      .createTable('billing_refunds')
      .addColumn('refund_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('charge_id', 'text', (c) => c.notNull())
      .addColumn('amount', 'bigint', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('vendor_refund_ref', 'text')
      .addColumn('failure_code', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('billing_refunds_charge')
      .on('billing_refunds')
      .columns(['charge_id', 'created_at'])
      .execute();
    await db.schema
      .createIndex('billing_refunds_account')
      .on('billing_refunds')
      .columns(['account_id', 'created_at', 'refund_id'])
      .execute();
  },
  async down(db: Kysely<any>) {
    for (const t of ['billing_refunds', 'billing_charges']) await db.schema.dropTable(t).execute();
  },
};

// The vendor events (webhooks) applied: each id is stored in the transaction of the move it made,
// so a replayed or repeated delivery finds it and changes nothing.
const vendorEvents: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('billing_vendor_events')
      .addColumn('vendor', 'text', (c) => c.notNull())
      .addColumn('event_id', 'text', (c) => c.notNull())
      .addColumn('received_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('billing_vendor_events_pk', ['vendor', 'event_id'])
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('billing_vendor_events').execute();
  },
};

export const billingMigrations: Record<string, Migration> = {
  '0001_initial': initial,
  '0002_vendor_events': vendorEvents,
};
