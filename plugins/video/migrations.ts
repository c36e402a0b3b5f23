import type { Kysely, Migration } from 'kysely';

/** Video jobs: one row a POST /v1/video/generate, from submit to its result (plugins/video/). */
export const videoMigrations: Record<string, Migration> = {
  '001_video_jobs': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('video_jobs')
        .addColumn('job_id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        // The VideoRequest, and the reference image's address.
        .addColumn('request', 'text', (c) => c.notNull())
        // The fetched reference image (JSON, base64) until the submit has handed it on; then null.
        .addColumn('reference_image', 'text')
        // Candidates in order with their plans (never a credential), which of them are BYOK, the submit's attempts.
        .addColumn('route', 'text', (c) => c.notNull())
        .addColumn('hold_id', 'text', (c) => c.notNull())
        .addColumn('hold_micros', 'bigint', (c) => c.notNull())
        .addColumn('vendor', 'text')
        .addColumn('model', 'text')
        .addColumn('vendor_job_id', 'text')
        .addColumn('step', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('video_url', 'text')
        .addColumn('thumbnail_url', 'text')
        .addColumn('placeholder', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('error', 'text')
        .addColumn('cost_micros', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('completed_at', 'bigint')
        .execute();
      await db.schema
        .createIndex('video_jobs_account')
        .on('video_jobs')
        .columns(['account_id', 'created_at'])
        .execute();
    },
  },
};
