import { sql, type Kysely, type Migration } from 'kysely';
import type { Svc } from '../../core/kit/area.js';

// Scheduling's share of retention (core/retention): finished webhook deliveries, finished
// cron runs and the attempts of every delivery, run and push, kept `retention.deliveries_days`.
// A delivery or run still retrying is kept whatever its age.

const indexes: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createIndex('webhook_deliveries_finished')
      .on('webhook_deliveries')
      .columns(['state', 'updated_at'])
      .execute();
    await db.schema.createIndex('cron_runs_finished').on('cron_runs').columns(['state', 'updated_at']).execute();
    await db.schema
      .createIndex('scheduling_attempts_started')
      .on('scheduling_attempts')
      .columns(['started_at'])
      .execute();
  },
};

export const retentionMigrations: Record<string, Migration> = { '0002_retention_indexes': indexes };

async function deleteFinished(
  db: Kysely<any>,
  table: string,
  id: string,
  states: string[],
  before: number,
  limit: number
): Promise<number> {
  const old = db
    .selectFrom(table)
    .select(id)
    .where('state', 'in', states)
    .where('updated_at', '<', before)
    .limit(limit);
  const r = await db.deleteFrom(table).where(id, 'in', old).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** One batch of each table; returns the most any one of them removed (the round stops below the limit). */
export async function sweepScheduling(db: Kysely<any>, before: number, limit: number): Promise<number> {
  const deliveries = await deleteFinished(
    db,
    'webhook_deliveries',
    'delivery_id',
    ['delivered', 'failed'],
    before,
    limit
  );
  const runs = await deleteFinished(db, 'cron_runs', 'run_id', ['succeeded', 'failed', 'missed'], before, limit);
  // Attempts have a two-column key: a row-value IN (SQLite ≥ 3.15 and PostgreSQL alike).
  const attempts = await sql`delete from scheduling_attempts where (ref_id, attempt) in (
    select ref_id, attempt from scheduling_attempts where started_at < ${before} limit ${limit})`.execute(db);
  return Math.max(deliveries, runs, Number(attempts.numAffectedRows ?? 0));
}

export function registerSchedulingRetention(svc: Svc): void {
  svc.retention.add({
    name: 'deliveries',
    days: svc.config.retention.deliveries_days,
    sweep: (before, limit) => sweepScheduling(svc.db, before, limit),
  });
}
