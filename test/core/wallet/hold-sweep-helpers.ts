import type { FastifyInstance } from 'fastify';
import { HOLD_SWEEP_JOB } from '../../../core/wallet/hold-sweep.js';

/** Resolves once a hold sweep has run to the end on this database after `since` (a job row done). */
export async function swept(app: FastifyInstance, since = 0, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const done = await app.svc.db
      .selectFrom('jobs')
      .select('job_id')
      .where('kind', '=', HOLD_SWEEP_JOB)
      .where('state', '=', 'done')
      .where('updated_at', '>=', since)
      .executeTakeFirst();
    if (done) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no ${HOLD_SWEEP_JOB} job finished within ${timeoutMs} ms`);
}
