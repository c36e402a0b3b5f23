import type { Svc } from '../context.js';
import { registerRecurringJob } from '../jobs/recurring-job.js';

export const HOLD_SWEEP_JOB = 'wallet.release_expired_holds';

/**
 * Holds of calls that died with their node are given back by a live node, every
 * `wallet.hold_sweep_seconds`, once they are past their expiry (the call's deadline + grace),
 * and once when a node starts. No restart is needed for the money to come back.
 */
export function registerHoldSweep(svc: Pick<Svc, 'jobs' | 'log' | 'wallet' | 'config'>): { start(): Promise<void> } {
  const log = svc.log.child({ part: 'wallet' });
  return registerRecurringJob(svc.jobs, log, {
    kind: HOLD_SWEEP_JOB,
    everyMs: svc.config.wallet.hold_sweep_seconds * 1000,
    run: async () => {
      const n = await svc.wallet.releaseExpired();
      if (n) log.warn({ holds: n }, 'released wallet holds of calls that did not finish by their deadline');
    },
  });
}
