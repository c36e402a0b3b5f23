import { setImmediate as yieldToRequests } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { CoreConfig } from '../../config/schema.js';
import type { JobsEngine } from '../jobs/engine.js';
import { registerRecurringJob } from '../jobs/recurring-job.js';
import { DAY_MS, rollUpUsage } from '../wallet/usage-rollup.js';

// Retention: every metered call adds a ledger entry, every delivery a record and attempts,
// every job a row. A recurring job (one node runs each round: the round's job has a unique
// key) removes what is older than its table's retention, in batches of BATCH rows, each its
// own short statement or transaction, so no round holds a lock for long.

export type RetentionConfig = CoreConfig['retention'];

/** Rows one statement removes at the most. */
export const BATCH = 1000;
const KIND = 'core.retention';

export interface RetentionTask {
  /** Names the task in the log line of a round. */
  name: string;
  /** Keep rows this many days; 0 keeps them all. */
  days: number;
  /** Remove up to `limit` rows older than `before` (epoch ms); returns how many went (per table at most `limit`). */
  sweep(before: number, limit: number): Promise<number>;
}

export class Retention {
  private readonly tasks: RetentionTask[] = [];
  private readonly recurring: { start(): Promise<void> };

  constructor(
    db: Kysely<any>,
    jobs: JobsEngine,
    cfg: RetentionConfig,
    private readonly log: Logger
  ) {
    this.add({ name: 'ledger', days: cfg.ledger_days, sweep: (before, limit) => rollUpUsage(db, before, limit) });
    this.add({
      name: 'jobs',
      days: cfg.jobs_days,
      sweep: async (before, limit) => {
        const old = db
          .selectFrom('jobs')
          .select('job_id')
          .where('state', 'in', ['done', 'dead'])
          .where('updated_at', '<', before)
          .limit(limit);
        const r = await db.deleteFrom('jobs').where('job_id', 'in', old).executeTakeFirst();
        return Number(r.numDeletedRows);
      },
    });
    // Not at start: a gateway restarted often would run a round each time, and a round right
    // after start would race whatever the operator (or a test) does first.
    this.recurring = registerRecurringJob(jobs, log, {
      kind: KIND,
      everyMs: cfg.interval_seconds * 1000,
      atStart: false,
      run: async (signal) => {
        const removed = await this.run(Date.now(), signal);
        if (Object.values(removed).some((n) => n > 0)) this.log.info({ removed }, 'retention: old rows removed');
      },
    });
  }

  /** An area's growing table (at build time, before the app is ready). */
  add(task: RetentionTask): void {
    this.tasks.push(task);
  }

  /** Queue the next round (each node asks at start; one row is made). */
  start(): Promise<void> {
    return this.recurring.start();
  }

  /**
   * One round: each task down to its cutoff, batch by batch, yielding to requests in between.
   * Cutoffs are whole UTC days, so a day's usage is either all in the ledger or all rolled up.
   */
  async run(now = Date.now(), signal?: AbortSignal): Promise<Record<string, number>> {
    const removed: Record<string, number> = {};
    for (const task of this.tasks) {
      if (task.days <= 0) continue;
      const before = Math.floor((now - task.days * DAY_MS) / DAY_MS) * DAY_MS;
      removed[task.name] = 0;
      for (;;) {
        if (signal?.aborted) return removed;
        const n = await task.sweep(before, BATCH);
        removed[task.name] += n;
        if (n < BATCH) break;
        await yieldToRequests();
      }
    }
    return removed;
  }
}
