import type { FastifyInstance } from 'fastify';
import { HOLD_SWEEP_JOB } from '../../../core/wallet/hold-sweep.js';

/**
 * Resolves once a hold sweep that started at or after `since` has run to the end (a job row done
 * whose run_at is `since` or later: the engine claims a job at run_at or after it, and the sweep
 * reads the clock when it runs). A run that only finished after `since` may have read the clock
 * before it and left a hold that expired meanwhile.
 */
export async function swept(app: FastifyInstance, since = 0, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const done = await app.svc.db
      .selectFrom('jobs')
      .select('job_id')
      .where('kind', '=', HOLD_SWEEP_JOB)
      .where('state', '=', 'done')
      .where('run_at', '>=', since)
      .executeTakeFirst();
    if (done) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no ${HOLD_SWEEP_JOB} job finished within ${timeoutMs} ms`);
}
