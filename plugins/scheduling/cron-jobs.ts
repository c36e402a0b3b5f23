import { newId } from '../../core/ids.js';
import { JobRetry, type JobContext, type JobsEngine } from '../../core/jobs/engine.js';
import type { Kysely } from 'kysely';
import { KIND, recordAttempt, type Deps } from './common.js';
import { nextSlot } from './cron-schedule.js';
import { nextDelayMs, postSigned } from './outbound.js';

// A cron job is driven by one queued tick job a slot. The tick for slot S, when it runs, moves
// the job's next_run_at from S to the next slot after now (so after downtime a missed run fires
// once, not once per missed slot) and, in the same transaction, enqueues the run for S and
// the tick for the next slot. Both carry unique keys (cron id + slot), and the move is
// conditional on next_run_at still being S: a tick run twice, on two nodes, or made stale by
// a PATCH, disable or delete does nothing.

export interface TickPayload {
  cron_id: string;
  slot: number;
}
export interface RunPayload {
  cron_id: string;
  slot: number;
}

export async function enqueueTick(jobs: JobsEngine, db: Kysely<any>, cronId: string, slot: number): Promise<void> {
  await jobs.enqueue(
    {
      kind: KIND.cronTick,
      uniqueKey: `cron.tick:${cronId}:${slot}`,
      payload: { cron_id: cronId, slot },
      runAt: slot,
      maxAttempts: 20,
    },
    db
  );
}

export function cronTickHandler(d: Deps) {
  return async (job: JobContext<TickPayload>): Promise<void> => {
    const { cron_id: cronId, slot } = job.payload;
    const db = d.svc.db;
    const cron = await db.selectFrom('cron_jobs').selectAll().where('cron_id', '=', cronId).executeTakeFirst();
    if (!cron || Number(cron.enabled) !== 1 || Number(cron.next_run_at) !== slot) return;
    const now = Date.now();
    const next = nextSlot(cron.schedule, cron.timezone, Math.max(now, slot));
    await db.transaction().execute(async (trx) => {
      const moved = await trx
        .updateTable('cron_jobs')
        .set({ next_run_at: next ?? null, last_run_at: slot, updated_at: now })
        .where('cron_id', '=', cronId)
        .where('next_run_at', '=', slot)
        .where('enabled', '=', 1)
        .executeTakeFirst();
      if (Number(moved.numUpdatedRows) !== 1) return;
      const runId = newId('run');
      const created = await d.svc.jobs.enqueue(
        {
          kind: KIND.cronRun,
          id: runId,
          uniqueKey: `cron.run:${cronId}:${slot}`,
          payload: { cron_id: cronId, slot },
          maxAttempts: Number(cron.retries) + 1,
        },
        trx
      );
      if (created.created) {
        await trx
          .insertInto('cron_runs')
          .values({
            run_id: runId,
            cron_id: cronId,
            account_id: cron.account_id,
            slot_at: slot,
            state: 'running',
            created_at: now,
            updated_at: now,
          })
          .execute();
      }
      if (next !== undefined) await enqueueTick(d.svc.jobs, trx, cronId, next);
    });
    d.svc.jobs.wake(); // the run was enqueued inside the transaction: look for it now it is committed
  };
}

/** One attempt of a cron run: the payload POSTed to the URL, signed like a webhook. */
export function cronRunHandler(d: Deps) {
  return async (job: JobContext<RunPayload>): Promise<void> => {
    const db = d.svc.db;
    const run = await db.selectFrom('cron_runs').selectAll().where('run_id', '=', job.id).executeTakeFirst();
    if (!run || run.state === 'succeeded' || run.state === 'failed') return;
    const cron = await db
      .selectFrom('cron_jobs')
      .selectAll()
      .where('cron_id', '=', job.payload.cron_id)
      .executeTakeFirst();
    if (!cron) {
      await db
        .updateTable('cron_runs')
        .set({ state: 'failed', updated_at: Date.now() })
        .where('run_id', '=', job.id)
        .execute();
      return;
    }
    const startedAt = Date.now();
    const o = await postSigned(d.svc.egress, {
      url: cron.url,
      msgId: job.id,
      body: cron.payload ?? '{}',
      secrets: await d.secrets.signingSecrets(cron.account_id),
      headers: { 'webhook-event-type': 'cron.run' },
      timeoutMs: Number(cron.timeout_seconds) * 1000,
      signal: job.signal,
      userAgent: d.userAgent,
    });
    await recordAttempt(db, job.id, cron.account_id, job.attempt, o, startedAt);
    const last = o.stop || job.attempt >= job.maxAttempts;
    await db
      .updateTable('cron_runs')
      .set({ state: o.ok ? 'succeeded' : last ? 'failed' : 'retrying', updated_at: Date.now() })
      .where('run_id', '=', job.id)
      .execute();
    if (!o.ok)
      throw new JobRetry(o.error ?? 'cron run failed', {
        delayMs: nextDelayMs(d.cfg, job.attempt, o.retryAfterMs),
        permanent: o.stop,
      });
  };
}
