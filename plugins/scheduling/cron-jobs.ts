import { newId, JobRetry, type JobContext, type JobsEngine, now } from '../../core/kit/area.js';
import type { Kysely } from 'kysely';
import { KIND, recordedAttempt, type Deps } from './common.js';
import { nextSlot } from './cron-schedule.js';
import type { SchedulingConfigT } from './config.js';
import { nextDelayMs, postSigned } from './outbound.js';

// A cron job is driven by one queued tick job a slot. The tick for slot S, when it runs, moves
// the job's next_run_at from S to the first slot still to come and, in the same transaction,
// enqueues the runs for S and for every slot after it already due, and the tick for that next
// slot: a tick that comes late (a loaded node, a restart) runs each slot it fell behind. That
// holds within the catch-up window (Kubernetes' startingDeadlineSeconds): a slot older than
// the window does not run; its tick records one `missed` run for it and every slot up to the
// first inside the window, and the chain resumes there. Ticks and runs carry unique keys (cron
// id + slot), and the move is conditional on next_run_at still being S: a tick run twice, on
// two nodes, or made stale by a PATCH, disable or delete does nothing.

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

/** Slots one tick runs at most; a chain further behind goes on with its next tick, due at once. */
const CATCH_UP_BATCH = 100;

/** How late a slot may still run: the configured window, else the job's period (the gap to its next slot), at least 60 s. */
export function catchUpMs(cfg: SchedulingConfigT, slot: number, after: number | undefined): number {
  if (cfg.cron_catch_up_seconds !== undefined) return cfg.cron_catch_up_seconds * 1000;
  return Math.max(60_000, after === undefined ? 0 : after - slot);
}

export function cronTickHandler(d: Deps) {
  return async (job: JobContext<TickPayload>): Promise<void> => {
    const { cron_id: cronId, slot } = job.payload;
    const db = d.svc.db;
    const cron = await db.selectFrom('cron_jobs').selectAll().where('cron_id', '=', cronId).executeTakeFirst();
    if (!cron || Number(cron.enabled) !== 1 || Number(cron.next_run_at) !== slot) return;
    const at = now();
    const after = nextSlot(cron.schedule, cron.timezone, slot);
    const windowStart = at - catchUpMs(d.cfg, slot, after);
    const missed = slot < windowStart;
    // This slot and every later one already due run now, not one tick job each: a chain that
    // fell behind catches up in one step however slowly ticks are claimed.
    const due = [slot];
    let next = missed ? nextSlot(cron.schedule, cron.timezone, windowStart - 1) : after;
    while (!missed && next !== undefined && next <= at && due.length < CATCH_UP_BATCH) {
      due.push(next);
      next = nextSlot(cron.schedule, cron.timezone, next);
    }
    await db.transaction().execute(async (trx) => {
      const moved = await trx
        .updateTable('cron_jobs')
        .set({ next_run_at: next ?? null, ...(missed ? {} : { last_run_at: due[due.length - 1] }), updated_at: at })
        .where('cron_id', '=', cronId)
        .where('next_run_at', '=', slot)
        .where('enabled', '=', 1)
        .executeTakeFirst();
      if (Number(moved.numUpdatedRows) !== 1) return;
      if (missed) {
        await trx
          .insertInto('cron_runs')
          .values({
            run_id: newId('run'),
            cron_id: cronId,
            account_id: cron.account_id,
            slot_at: slot,
            state: 'missed',
            missed_until: next ?? windowStart,
            created_at: at,
            updated_at: at,
          })
          .execute();
        if (next !== undefined) await enqueueTick(d.svc.jobs, trx, cronId, next);
        return;
      }
      for (const s of due) {
        const runId = newId('run');
        const created = await d.svc.jobs.enqueue(
          {
            kind: KIND.cronRun,
            id: runId,
            uniqueKey: `cron.run:${cronId}:${s}`,
            payload: { cron_id: cronId, slot: s },
            maxAttempts: Number(cron.retries) + 1,
          },
          trx
        );
        if (!created.created) continue;
        await trx
          .insertInto('cron_runs')
          .values({
            run_id: runId,
            cron_id: cronId,
            account_id: cron.account_id,
            slot_at: s,
            state: 'running',
            missed_until: null,
            created_at: at,
            updated_at: at,
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
    const secrets = await d.secrets.signingSecrets(cron.account_id);
    const o = await recordedAttempt(db, job.id, cron.account_id, job.attempt, () =>
      postSigned(d.svc.egress, {
        url: cron.url,
        msgId: job.id,
        body: cron.payload ?? '{}',
        secrets,
        headers: { 'webhook-event-type': 'cron.run' },
        timeoutMs: Number(cron.timeout_seconds) * 1000,
        signal: job.signal,
        userAgent: d.userAgent,
      })
    );
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
