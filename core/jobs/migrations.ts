import type { Kysely, Migration } from 'kysely';

// The durable jobs table. One row a job; `unique_key` (nullable, unique) lets a producer
// enqueue the same logical job from several nodes and get one row (a cron slot, a delivery).

const init: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('jobs')
      .addColumn('job_id', 'text', (c) => c.primaryKey())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('unique_key', 'text', (c) => c.unique())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('run_at', 'bigint', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('max_attempts', 'integer', (c) => c.notNull())
      .addColumn('lease_owner', 'text')
      .addColumn('lease_until', 'bigint')
      .addColumn('last_error', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('jobs_due').on('jobs').columns(['state', 'kind', 'run_at']).execute();
    await db.schema.createIndex('jobs_lease').on('jobs').columns(['state', 'lease_until']).execute();
  },
};

export const jobsMigrations: Record<string, Migration> = { '0001_jobs': init };
