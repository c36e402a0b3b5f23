import { setImmediate as yieldToRequests } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { CoreConfig } from '../../config/schema.js';
import type { JobsEngine } from '../jobs/engine.js';
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

  constructor(
    db: Kysely<any>, private readonly jobs: JobsEngine, private readonly cfg: RetentionConfig, private readonly log: Logger,
  ) {
    this.add({ name: 'ledger', days: cfg.ledger_days, sweep: (before, limit) => rollUpUsage(db, before, limit) });
    this.add({
      name: 'jobs', days: cfg.jobs_days,
      sweep: async (before, limit) => {
        const old = db.selectFrom('jobs').select('job_id')
          .where('state', 'in', ['done', 'dead']).where('updated_at', '<', before).limit(limit);
        const r = await db.deleteFrom('jobs').where('job_id', 'in', old).executeTakeFirst();
        return Number(r.numDeletedRows);
      },
    });
    jobs.register<{ slot: number }>(KIND, async (job) => {
      // The next round is queued first, so a failing round does not end the chain.
      await this.enqueue(job.payload.slot + 1);
      const removed = await this.run(Date.now(), job.signal);
      if (Object.values(removed).some((n) => n > 0)) this.log.info({ removed }, 'retention: old rows removed');
    }, { concurrency: 1 });
  }

  /** An area's growing table (at build time, before the app is ready). */
  add(task: RetentionTask): void {
    this.tasks.push(task);
  }

  /**
   * Queue the next round (at start); every node asks, one row is made. Not one now: a gateway
   * restarted often would run a round each time, and a round right after start would race
   * whatever the operator (or a test) does first.
   */
  async start(now = Date.now()): Promise<void> {
    await this.enqueue(Math.floor(now / this.intervalMs()) + 1);
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

  private intervalMs(): number {
    return this.cfg.interval_seconds * 1000;
  }

  private async enqueue(slot: number): Promise<void> {
    const runAt = slot * this.intervalMs();
    await this.jobs.enqueue({ kind: KIND, payload: { slot }, uniqueKey: `retention:${slot}`, runAt, maxAttempts: 3 });
  }
}
