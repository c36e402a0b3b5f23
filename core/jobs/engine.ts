import { hostname } from 'node:os';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import PQueue from 'p-queue';
import type { CoreConfig } from '../../config/schema.js';
import type { DialectName } from '../db/open.js';
import { base62, newId } from '../ids.js';
import { backoffMs } from './backoff.js';
import { LatenessWindow } from './lateness.js';
import { JobStore, type JobRow, type JobState } from './store.js';
import { JobRetry, type EnqueueSpec, type JobContext, type JobHandler, type KindOptions } from './types.js';

export { JobRetry, type EnqueueSpec, type JobContext, type JobHandler, type KindOptions } from './types.js';

export type JobsConfig = CoreConfig['jobs'];

interface Kind {
  handler: JobHandler;
  concurrency: number;
  leaseMs: number;
  backoff: (attempt: number) => number;
  onExhausted?: KindOptions['onExhausted'];
  queue: PQueue;
  /** Claimed by this node and not yet finished (waiting in the queue or running). */
  active: number;
  /** Nothing of this kind is due before this time, as far as this node knows. */
  idleUntil: number;
}

interface Held {
  row: JobRow;
  ac: AbortController;
  started: boolean;
  /** Given back or lost: the run must not write its outcome. */
  settled: boolean;
  /** The handler marked it done in its own transaction (JobContext.completeIn). */
  completed?: boolean;
}

const CLAIM_BATCH = 100;
/** Least time between claim rounds that wakes (not a full batch) start. */
const MIN_TICK_GAP_MS = 5;

/**
 * The durable jobs engine: jobs live in the database; each node claims due jobs with a lease,
 * renews the lease while it runs them, and writes the outcome fenced by the lease. A node
 * that dies leaves leases that expire, and another node (or the restarted one) claims the
 * jobs again: delivery is at least once, so handlers make their effect idempotent by job id.
 */
export class JobsEngine {
  readonly owner = `${hostname()}:${process.pid}:${base62(6)}`;
  readonly store: JobStore;
  private readonly kinds = new Map<string, Kind>();
  private readonly held = new Map<string, Held>();
  private readonly lateness = new LatenessWindow();
  private readonly counters = { claimed: 0, succeeded: 0, failed: 0, retried: 0, dead: 0, released: 0, lost: 0 };
  private running = false;
  private ticking = false;
  private again = false;
  private timer?: NodeJS.Timeout;
  private timerAt = Infinity;
  private lastTick = 0;
  private renewTimer?: NodeJS.Timeout;
  private lastPurge = 0;
  private lastReap = 0;

  /**
   * `soleNode`: no other engine uses this database (a SQLite file, which one gateway owns:
   * core/sqlite/owner-lock.ts). Every job is then enqueued here, so a kind found empty sleeps
   * until its next known job or its own wake, not the poll interval: an idle node makes one
   * statement a poll (the reap of expired leases) instead of one for every kind.
   */
  constructor(
    readonly db: Kysely<any>,
    dialect: DialectName,
    private readonly cfg: JobsConfig,
    private readonly log: Logger,
    private readonly opts: { soleNode?: boolean } = {}
  ) {
    this.store = new JobStore(db, dialect);
  }

  register<P = any>(kind: string, handler: JobHandler<P>, opts: KindOptions = {}): void {
    if (this.kinds.has(kind)) throw new Error(`job kind "${kind}" is registered twice`);
    const concurrency = opts.concurrency ?? this.cfg.concurrency;
    this.kinds.set(kind, {
      handler,
      concurrency,
      leaseMs: opts.leaseMs ?? this.cfg.lease_ms,
      backoff: opts.backoff ?? ((n) => backoffMs(n)),
      onExhausted: opts.onExhausted,
      queue: new PQueue({ concurrency }),
      active: 0,
      idleUntil: 0,
    });
  }

  /** Insert a job (inside the caller's transaction when `db` is one). Duplicate id or unique key: nothing new. */
  async enqueue(spec: EnqueueSpec, db: Kysely<any> = this.db): Promise<{ id: string; created: boolean }> {
    const now = Date.now();
    const runAt = spec.runAt ?? now;
    const r = await this.store.insert(db, { ...spec, id: spec.id ?? newId('job'), runAt }, now);
    if (r.created) {
      const k = this.kinds.get(spec.kind);
      if (k && runAt < k.idleUntil) k.idleUntil = runAt;
      if (runAt <= now + this.cfg.poll_ms) this.wakeAt(runAt);
    }
    return r;
  }

  get(id: string): Promise<JobRow | undefined> {
    return this.store.get(id);
  }

  /** Remove a job that has not started. */
  cancel(id: string): Promise<boolean> {
    return this.store.cancel(id);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    const every = Math.max(50, Math.floor(this.cfg.lease_ms / 3));
    this.renewTimer = setInterval(() => void this.renew(), every);
    this.schedule(0);
  }

  /**
   * Look for due jobs now (a job was enqueued or finished on this node). With `kind`: that kind's
   * jobs may have become due by a write outside enqueue, so a kind idling until its next known
   * job (a sole node's) looks again too.
   */
  wake(kind?: string): void {
    const k = kind === undefined ? undefined : this.kinds.get(kind);
    if (k) k.idleUntil = 0;
    this.wakeAt(Date.now());
  }

  private wakeAt(at: number): void {
    if (!this.running) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    // Many wakes in a burst (a thousand enqueues a second) make one claim round, not one each.
    const when = Math.max(at, this.lastTick + MIN_TICK_GAP_MS);
    if (this.timerAt <= when) return;
    this.schedule(Math.max(0, when - Date.now()));
  }

  private schedule(ms: number): void {
    if (!this.running) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = Date.now() + ms;
    this.timer = setTimeout(() => {
      this.timerAt = Infinity;
      void this.tick();
    }, ms);
  }

  private async tick(): Promise<void> {
    if (this.ticking || !this.running) return;
    this.ticking = true;
    this.again = false;
    this.lastTick = Date.now();
    let more = false;
    try {
      const now = Date.now();
      if (now - this.lastReap >= this.cfg.poll_ms) {
        this.lastReap = now;
        if (await this.store.reap(now)) for (const k of this.kinds.values()) k.idleUntil = 0;
      }
      const empty: string[] = [];
      for (const [kind, k] of this.kinds) {
        const free = k.concurrency - k.active;
        // A kind found empty is not asked again before its next known job or the poll interval.
        if (free <= 0 || k.idleUntil > now || !this.running) continue;
        const want = Math.min(free, CLAIM_BATCH);
        const rows = await this.store.claim(kind, want, this.owner, k.leaseMs, now);
        if (rows.length === want) more = true;
        else {
          k.idleUntil = this.opts.soleNode ? Infinity : now + this.cfg.poll_ms;
          empty.push(kind);
        }
        for (const row of rows) this.launch(row, k, Date.now());
      }
      // Kinds that ran dry: when is their next job due? (Busy kinds are woken by finishing jobs.)
      // A sole node reads them at once: nothing else would wake a kind it put to sleep.
      if ((!more || this.opts.soleNode) && empty.length) {
        for (const [kind, next] of await this.store.nextRunAtByKind(empty)) {
          const k = this.kinds.get(kind)!;
          if (next > now) k.idleUntil = Math.min(k.idleUntil, next);
          // Due now yet not claimed: another node took them; look again at the poll interval.
          else if (this.opts.soleNode) k.idleUntil = now + this.cfg.poll_ms;
        }
      }
      if (now - this.lastPurge > 60_000) {
        this.lastPurge = now;
        await this.store.purgeDone(now - this.cfg.done_retention_seconds * 1000);
      }
    } catch (e) {
      if (this.running) this.log.error({ err: e }, 'jobs: claim failed');
    } finally {
      this.ticking = false;
    }
    if (!this.running) return;
    if (more) return this.schedule(0);
    if (this.again) return this.schedule(MIN_TICK_GAP_MS);
    // A kind with no free slot is woken by its own jobs finishing, not by the clock.
    const soonest = Math.min(
      Infinity,
      ...[...this.kinds.values()].filter((k) => k.active < k.concurrency).map((k) => k.idleUntil)
    );
    this.schedule(Math.min(this.cfg.poll_ms, Math.max(MIN_TICK_GAP_MS, soonest - Date.now())));
  }

  private launch(row: JobRow, k: Kind, now: number): void {
    this.counters.claimed++;
    this.lateness.add(now - row.run_at);
    k.active++;
    const held: Held = { row, ac: new AbortController(), started: false, settled: false };
    this.held.set(row.job_id, held);
    void k.queue.add(async () => {
      try {
        if (!held.settled) await this.run(held, k);
      } finally {
        this.held.delete(row.job_id);
        k.active--;
        this.wake();
      }
    });
  }

  private async run(held: Held, k: Kind): Promise<void> {
    held.started = true;
    const { row } = held;
    if (row.attempts > row.max_attempts) {
      // Its last attempt was claimed by a node that died: there is no attempt left to make.
      const error = row.last_error ?? 'the lease of the last attempt expired';
      if (await this.store.bury(row.job_id, this.owner, error)) {
        this.counters.dead++;
        await k.onExhausted?.(row.job_id, JSON.parse(row.payload), error);
      }
      return;
    }
    const ctx: JobContext = {
      id: row.job_id,
      kind: row.kind,
      payload: JSON.parse(row.payload),
      attempt: row.attempts,
      maxAttempts: row.max_attempts,
      runAt: row.run_at,
      signal: held.ac.signal,
      completeIn: async (trx) => (held.completed = await this.store.complete(row.job_id, this.owner, Date.now(), trx)),
    };
    try {
      await k.handler(ctx);
      if (held.settled) return;
      if (held.completed || (await this.store.complete(row.job_id, this.owner))) this.counters.succeeded++;
    } catch (e) {
      // A completion in a transaction that then failed was rolled back with it.
      held.completed = false;
      if (held.settled) return;
      this.counters.failed++;
      const message = (e as Error)?.message ?? String(e);
      const permanent = e instanceof JobRetry && e.permanent;
      try {
        if (permanent || row.attempts >= row.max_attempts) {
          if (await this.store.bury(row.job_id, this.owner, message)) this.counters.dead++;
        } else {
          const delay = e instanceof JobRetry && e.delayMs !== undefined ? e.delayMs : k.backoff(row.attempts);
          const at = Date.now() + Math.max(0, delay);
          if (await this.store.retry(row.job_id, this.owner, at, message)) {
            this.counters.retried++;
            k.idleUntil = Math.min(k.idleUntil, at);
          }
        }
      } catch (err) {
        this.log.error(
          { err, job_id: row.job_id },
          'jobs: could not record a failure; the lease will expire and the job run again'
        );
      }
    }
  }

  private async renew(): Promise<void> {
    const byLease = new Map<number, string[]>();
    for (const h of this.held.values()) {
      if (h.settled) continue;
      const leaseMs = this.kinds.get(h.row.kind)!.leaseMs;
      byLease.set(leaseMs, [...(byLease.get(leaseMs) ?? []), h.row.job_id]);
    }
    for (const [leaseMs, ids] of byLease) {
      try {
        const kept = await this.store.renew(this.owner, ids, leaseMs);
        for (const id of ids) {
          const h = this.held.get(id);
          if (h && !kept.has(id) && !h.settled) {
            h.settled = true;
            this.counters.lost++;
            h.ac.abort(new Error('lease lost'));
            this.log.warn({ job_id: id }, 'jobs: lease lost; another node may run the job');
          }
        }
      } catch (e) {
        this.log.warn({ err: e }, 'jobs: lease renewal failed');
      }
    }
  }

  /** Stop claiming; give back what has not started; let running jobs finish within the grace period, then give those back too. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    while (this.ticking) await new Promise((r) => setTimeout(r, 5));
    for (const h of this.held.values()) if (!h.started) await this.giveBack(h);
    const idle = Promise.all([...this.kinds.values()].map((k) => k.queue.onIdle()));
    let graceTimer: NodeJS.Timeout | undefined;
    await Promise.race([idle, new Promise((r) => (graceTimer = setTimeout(r, this.cfg.stop_grace_ms)))]);
    clearTimeout(graceTimer);
    for (const h of this.held.values()) {
      if (h.settled) continue;
      await this.giveBack(h);
      h.ac.abort(new Error('the gateway is shutting down'));
    }
    clearInterval(this.renewTimer);
    await Promise.race([idle, new Promise((r) => setTimeout(r, 1000).unref())]);
  }

  private async giveBack(h: Held): Promise<void> {
    h.settled = true;
    try {
      if (await this.store.release(h.row.job_id, this.owner)) this.counters.released++;
    } catch (e) {
      this.log.warn({ err: e, job_id: h.row.job_id }, 'jobs: release failed; the lease will expire instead');
    }
  }

  /** Counts from the database (every node) and this node's counters and start lateness. */
  async metrics() {
    const kinds: Record<string, Record<JobState, number>> = {};
    const totals: Record<JobState, number> = { queued: 0, running: 0, done: 0, dead: 0 };
    for (const c of await this.store.counts()) {
      kinds[c.kind] ??= { queued: 0, running: 0, done: 0, dead: 0 };
      kinds[c.kind][c.state] = c.n;
      totals[c.state] += c.n;
    }
    const local = Object.fromEntries(
      [...this.kinds].map(([k, v]) => [k, { active: v.active, concurrency: v.concurrency }])
    );
    return {
      owner: this.owner,
      totals,
      kinds,
      node: { ...this.counters, kinds: local },
      lateness_ms: this.lateness.summary(),
    };
  }
}
