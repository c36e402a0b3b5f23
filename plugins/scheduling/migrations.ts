import type { Kysely, Migration } from 'kysely';
import { retentionMigrations } from './retention.js';

// Scheduling's own tables. The jobs themselves (deliveries, cron ticks and runs, pushes) live
// in the core jobs table; these hold what the API shows and what a delivery needs.

const init: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('webhook_secrets')
      .addColumn('secret_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('secret', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint')
      .execute();
    await db.schema
      .createIndex('webhook_secrets_account')
      .on('webhook_secrets')
      .columns(['account_id', 'created_at'])
      .execute();

    await db.schema
      .createTable('webhook_deliveries')
      .addColumn('delivery_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('event_type', 'text')
      .addColumn('headers', 'text')
      .addColumn('secret', 'text')
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('max_attempts', 'integer', (c) => c.notNull())
      .addColumn('next_attempt_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('webhook_deliveries_account')
      .on('webhook_deliveries')
      .columns(['account_id', 'created_at'])
      .execute();

    // One row an attempt: webhook deliveries, cron runs and queue pushes alike.
    await db.schema
      .createTable('scheduling_attempts')
      .addColumn('ref_id', 'text', (c) => c.notNull())
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('response_code', 'integer')
      .addColumn('duration_ms', 'integer', (c) => c.notNull())
      .addColumn('error', 'text')
      .addColumn('started_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('scheduling_attempts_pk', ['ref_id', 'attempt'])
      .execute();

    await db.schema
      .createTable('cron_jobs')
      .addColumn('cron_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('schedule', 'text', (c) => c.notNull())
      .addColumn('timezone', 'text', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('payload', 'text')
      .addColumn('retries', 'integer', (c) => c.notNull())
      .addColumn('timeout_seconds', 'integer', (c) => c.notNull())
      .addColumn('enabled', 'integer', (c) => c.notNull())
      .addColumn('next_run_at', 'bigint')
      .addColumn('last_run_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('cron_jobs_account').on('cron_jobs').columns(['account_id', 'created_at']).execute();

    await db.schema
      .createTable('cron_runs')
      .addColumn('run_id', 'text', (c) => c.primaryKey())
      .addColumn('cron_id', 'text', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('slot_at', 'bigint', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('cron_runs_cron').on('cron_runs').columns(['cron_id', 'created_at']).execute();

    await db.schema
      .createTable('queue_messages')
      .addColumn('message_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('queue', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('visible_at', 'bigint', (c) => c.notNull())
      .addColumn('receive_count', 'integer', (c) => c.notNull())
      .addColumn('receipt_handle', 'text')
      .addColumn('dead_reason', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('queue_messages_ready')
      .on('queue_messages')
      .columns(['account_id', 'queue', 'state', 'visible_at'])
      .execute();
    await db.schema.createIndex('queue_messages_receipt').on('queue_messages').columns(['receipt_handle']).execute();

    await db.schema
      .createTable('queue_subscriptions')
      .addColumn('subscription_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('queue', 'text', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('queue_subscriptions_queue')
      .on('queue_subscriptions')
      .columns(['account_id', 'queue'])
      .execute();
  },
};

// A missed run stands for the slots its tick found past the catch-up window (cron-jobs.ts).
const missedUntil: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('cron_runs').addColumn('missed_until', 'bigint').execute();
  },
};

// The gateway's event endpoints (events.ts), and which endpoint an event's delivery is for: its
// secret signs the delivery, and a deleted endpoint's pending deliveries are not sent.
const eventEndpoints: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('event_endpoints')
      .addColumn('endpoint_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('event_types', 'text')
      .addColumn('description', 'text')
      .addColumn('secret', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('event_endpoints_account')
      .on('event_endpoints')
      .columns(['account_id', 'created_at'])
      .execute();
    await db.schema.alterTable('webhook_deliveries').addColumn('endpoint_id', 'text').execute();
  },
};

export const schedulingMigrations: Record<string, Migration> = {
  '0001_scheduling': init,
  ...retentionMigrations,
  '0003_cron_missed_until': missedUntil,
  '0004_event_endpoints': eventEndpoints,
};
