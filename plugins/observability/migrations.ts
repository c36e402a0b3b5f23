import type { Kysely, Migration } from 'kysely';

// Errors: an issue per account and fingerprint, and each occurrence (an error event) under it.
const errors: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('obs_issues')
      .addColumn('issue_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      .addColumn('type', 'text')
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('culprit', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('count', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('last_seen', 'bigint', (c) => c.notNull())
      .addColumn('status_changed_at', 'bigint')
      .addUniqueConstraint('obs_issues_fingerprint', ['account_id', 'fingerprint'])
      .execute();
    await db.schema.createIndex('obs_issues_list').on('obs_issues').columns(['account_id', 'created_at']).execute();
    // Retention removes issues not seen for the retention period.
    await db.schema.createIndex('obs_issues_last_seen').on('obs_issues').column('last_seen').execute();
    await db.schema
      .createTable('obs_errors')
      .addColumn('error_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('issue_id', 'text', (c) => c.notNull())
      .addColumn('message', 'text', (c) => c.notNull())
      .addColumn('code', 'text')
      .addColumn('stack', 'text')
      .addColumn('tags', 'text', (c) => c.notNull())
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('obs_errors_issue')
      .on('obs_errors')
      .columns(['issue_id', 'created_at', 'error_id'])
      .execute();
    await db.schema.createIndex('obs_errors_created').on('obs_errors').column('created_at').execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('obs_errors').execute();
    await db.schema.dropTable('obs_issues').execute();
  },
};

// The public ingest key of each account (Sentry DSNs) and the numeric project id a DSN needs.
const publicKeys: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('obs_public_keys')
      .addColumn('account_id', 'text', (c) => c.primaryKey())
      .addColumn('public_key', 'text', (c) => c.notNull().unique())
      .addColumn('sentry_project', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('obs_public_keys').execute();
  },
};

// Custom events and metric points: append-only, removed by age.
const eventsAndMetrics: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('obs_events')
      .addColumn('event_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('event', 'text', (c) => c.notNull())
      .addColumn('distinct_id', 'text')
      .addColumn('properties', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('obs_events_list').on('obs_events').columns(['account_id', 'created_at']).execute();
    await db.schema.createIndex('obs_events_created').on('obs_events').column('created_at').execute();
    await db.schema
      .createTable('obs_metrics')
      .addColumn('point_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('tags', 'text', (c) => c.notNull())
      .addColumn('value', 'double precision', (c) => c.notNull())
      .addColumn('ts', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('obs_metrics_series').on('obs_metrics').columns(['account_id', 'name', 'ts']).execute();
    await db.schema.createIndex('obs_metrics_ts').on('obs_metrics').column('ts').execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('obs_metrics').execute();
    await db.schema.dropTable('obs_events').execute();
  },
};

// Feature flags (a definition per account and key, with the version updates are checked against)
// and the audit of every change.
const flags: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('obs_flags')
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('definition', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('obs_flags_pk', ['account_id', 'key'])
      .execute();
    await db.schema.createIndex('obs_flags_list').on('obs_flags').columns(['account_id', 'created_at']).execute();
    await db.schema
      .createTable('obs_flag_audit')
      .addColumn('audit_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('before', 'text')
      .addColumn('after', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('obs_flag_audit_key')
      .on('obs_flag_audit')
      .columns(['account_id', 'key', 'created_at'])
      .execute();
    await db.schema.createIndex('obs_flag_audit_created').on('obs_flag_audit').column('created_at').execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('obs_flag_audit').execute();
    await db.schema.dropTable('obs_flags').execute();
  },
};

export const observabilityMigrations: Record<string, Migration> = {
  '0001_errors': errors,
  '0002_public_keys': publicKeys,
  '0003_events_metrics': eventsAndMetrics,
  '0004_flags': flags,
};
