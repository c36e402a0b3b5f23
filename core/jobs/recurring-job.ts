import type { Logger } from 'pino';
import type { JobsEngine } from './engine.js';

export interface RecurringJob {
  /** The job kind; also the prefix of each run's unique key. */
  kind: string;
  everyMs: number;
  /** One run. An error is logged and the next run still comes. */
  run(signal: AbortSignal): Promise<void>;
  /**
   * Run once as each node starts (the default), or only queue the next slot: a task that must
   * not race what comes right after a start, nor run at every restart, passes false.
   */
  atStart?: boolean;
}

/**
 * A system task every node helps run, once per `everyMs` across the cluster: each run is a
 * job whose unique key is its time slot, so however many nodes enqueue a slot it runs once,
 * and a node that dies while running it leaves a lease that expires and another node runs it.
 * Each run enqueues the next slot, and every node runs it once when it starts (or, with
 * `atStart: false`, queues the next slot), so the chain survives any single node.
 * Register before the engine starts (at build time).
 */
export function registerRecurringJob(jobs: JobsEngine, log: Logger, job: RecurringJob): { start(): Promise<void> } {
  const enqueue = (slot: number, uniqueKey = `${job.kind}:${slot}`) =>
    jobs.enqueue({ kind: job.kind, uniqueKey, payload: { slot }, runAt: slot, maxAttempts: 3 });
  const nextSlot = (after: number) => (Math.floor(after / job.everyMs) + 1) * job.everyMs;
  jobs.register<{ slot: number }>(
    job.kind,
    async (ctx) => {
      try {
        await job.run(ctx.signal);
      } catch (e) {
        // A failed run is retried by the next slot, not by the engine: the chain must go on.
        log.error({ err: e, kind: job.kind }, 'recurring job failed; it runs again at its next slot');
      } finally {
        await enqueue(nextSlot(Math.max(ctx.payload.slot, Date.now())));
      }
    },
    { concurrency: 1 }
  );
  return {
    start: async () => {
      if (job.atStart === false) return void (await enqueue(nextSlot(Date.now())));
      // This node's own run at start (its slot may have run on another node already), which
      // then enqueues the next slot: a chain lost with every node comes back with the first.
      await enqueue(Date.now(), `${job.kind}:start:${jobs.owner}`);
    },
  };
}
