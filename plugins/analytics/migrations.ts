import type { Kysely, Migration } from 'kysely';

const events: Migration = {
  async up(db: Kysely<any>) {
    // One row an event; the uuid (the caller's, or made here) is the dedup key of a resend.
    await db.schema
      .createTable('analytics_events')
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('uuid', 'text', (c) => c.notNull())
      .addColumn('event', 'text', (c) => c.notNull())
      .addColumn('distinct_id', 'text', (c) => c.notNull())
      .addColumn('ts', 'bigint', (c) => c.notNull())
      .addColumn('properties', 'text', (c) => c.notNull())
      .addColumn('received_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('analytics_events_pk', ['account_id', 'uuid'])
      .execute();
    // Covers what a funnel or cohort reads of an event but its properties, so their scans
    // never touch the table (docs/analytics.md, storage).
    await db.schema
      .createIndex('analytics_events_query')
      .on('analytics_events')
      .columns(['account_id', 'event', 'ts', 'distinct_id'])
      .execute();
    // Retention removes the oldest events.
    await db.schema.createIndex('analytics_events_ts').on('analytics_events').column('ts').execute();

    // A distinct id merged into a person (identify); ids never identified are their own person.
    await db.schema
      .createTable('analytics_people')
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('distinct_id', 'text', (c) => c.notNull())
      .addColumn('person_id', 'text', (c) => c.notNull())
      .addColumn('traits', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('analytics_people_pk', ['account_id', 'distinct_id'])
      .execute();
    await db.schema
      .createIndex('analytics_people_person')
      .on('analytics_people')
      .columns(['account_id', 'person_id'])
      .execute();

    // The public write-only key of an account (PostHog's project API key), one an account.
    await db.schema
      .createTable('analytics_public_keys')
      .addColumn('account_id', 'text', (c) => c.primaryKey())
      .addColumn('public_key', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('analytics_public_keys').execute();
    await db.schema.dropTable('analytics_people').execute();
    await db.schema.dropTable('analytics_events').execute();
  },
};

export const analyticsMigrations: Record<string, Migration> = { '0001_events': events };
