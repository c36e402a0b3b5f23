import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../db/open.js';
import type { EnqueueSpec } from './types.js';

// The SQL of the jobs engine. Claims are one statement: an UPDATE of the rows a sub-select
// picks. On PostgreSQL the sub-select locks `FOR UPDATE SKIP LOCKED`, so engines on several
// nodes each take different rows without waiting on one another; on SQLite the single
// writer makes the same conditional UPDATE atomic. Every later write is fenced by the lease
// owner, so a node that lost its lease cannot overwrite the node that took the job over.

export type JobState = 'queued' | 'running' | 'done' | 'dead';

export interface JobRow {
  job_id: string;
  kind: string;
  payload: string;
  unique_key: string | null;
  state: JobState;
  run_at: number;
  attempts: number;
  max_attempts: number;
  lease_owner: string | null;
  lease_until: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

export class JobStore {
  constructor(
    readonly db: Kysely<any>,
    private readonly dialect: DialectName
  ) {}

  /** Insert a queued job in `db` (a transaction or the store's); a duplicate id or unique key inserts nothing. */
  async insert(
    db: Kysely<any>,
    spec: EnqueueSpec & { id: string; runAt: number },
    now: number
  ): Promise<{ id: string; created: boolean }> {
    const r = await db
      .insertInto('jobs')
      .values({
        job_id: spec.id,
        kind: spec.kind,
        payload: JSON.stringify(spec.payload ?? null),
        unique_key: spec.uniqueKey ?? null,
        state: 'queued',
        run_at: spec.runAt,
        attempts: 0,
        max_attempts: spec.maxAttempts ?? 5,
        lease_owner: null,
        lease_until: null,
        last_error: null,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    if (Number(r.numInsertedOrUpdatedRows ?? 0) === 1) return { id: spec.id, created: true };
    const existing = await db
      .selectFrom('jobs')
      .select('job_id')
      .where((eb) =>
        spec.uniqueKey
          ? eb.or([eb('job_id', '=', spec.id), eb('unique_key', '=', spec.uniqueKey)])
          : eb('job_id', '=', spec.id)
      )
      .executeTakeFirst();
    return { id: (existing?.job_id as string) ?? spec.id, created: false };
  }

  async get(id: string): Promise<JobRow | undefined> {
    return (await this.db.selectFrom('jobs').selectAll().where('job_id', '=', id).executeTakeFirst()) as
      | JobRow
      | undefined;
  }

  /** Remove a job that has not started. */
  async cancel(id: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('jobs')
      .where('job_id', '=', id)
      .where('state', '=', 'queued')
      .executeTakeFirst();
    return Number(r.numDeletedRows) === 1;
  }

  /** Take up to `limit` due queued jobs of a kind (the (state, kind, run_at) index serves it). */
  async claim(kind: string, limit: number, owner: string, leaseMs: number, now = Date.now()): Promise<JobRow[]> {
    const set = {
      state: 'running',
      lease_owner: owner,
      lease_until: now + leaseMs,
      attempts: sql`attempts + 1`,
      updated_at: now,
    };
    let rows: JobRow[];
    if (this.dialect === 'postgres') {
      // The pick is a materialized CTE: as an `IN (…)` sub-select PostgreSQL may run it again
      // for each row it updates, and SKIP LOCKED then hands out the next rows each time, so a
      // claim of 32 could take the whole queue.
      rows = (await this.db
        .with(
          (w) => w('picked').materialized(),
          (db) =>
            db
              .selectFrom('jobs')
              .select('job_id')
              .where('state', '=', 'queued')
              .where('kind', '=', kind)
              .where('run_at', '<=', now)
              .orderBy('run_at')
              .limit(limit)
              .forUpdate()
              .skipLocked()
        )
        .updateTable('jobs')
        .set(set)
        .from('picked')
        .whereRef('jobs.job_id', '=', 'picked.job_id')
        .returningAll('jobs')
        .execute()) as JobRow[];
    } else {
      const pick = this.db
        .selectFrom('jobs')
        .select('job_id')
        .where('state', '=', 'queued')
        .where('kind', '=', kind)
        .where('run_at', '<=', now)
        .orderBy('run_at')
        .limit(limit);
      rows = (await this.db
        .updateTable('jobs')
        .set(set)
        .where('state', '=', 'queued')
        .where('job_id', 'in', pick)
        .returningAll()
        .execute()) as JobRow[];
    }
    return rows.sort((a, b) => a.run_at - b.run_at);
  }

  /**
   * Put jobs whose lease ran out (their node died or stalled) back in the queue, due at once;
   * the attempt they were on stays counted. The old owner's writes are fenced out.
   */
  async reap(now = Date.now()): Promise<number> {
    const r = await this.db
      .updateTable('jobs')
      .set({ state: 'queued', lease_owner: null, lease_until: null, updated_at: now })
      .where('state', '=', 'running')
      .where('lease_until', '<', now)
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  /** Extend the leases of the jobs this owner runs; returns the ids it still holds. */
  async renew(owner: string, ids: string[], leaseMs: number, now = Date.now()): Promise<Set<string>> {
    if (!ids.length) return new Set();
    const rows = await this.db
      .updateTable('jobs')
      .set({ lease_until: now + leaseMs })
      .where('lease_owner', '=', owner)
      .where('state', '=', 'running')
      .where('job_id', 'in', ids)
      .returning('job_id')
      .execute();
    return new Set(rows.map((r: any) => r.job_id as string));
  }

  private fenced(id: string, owner: string, db: Kysely<any> = this.db) {
    return db
      .updateTable('jobs')
      .where('job_id', '=', id)
      .where('lease_owner', '=', owner)
      .where('state', '=', 'running');
  }

  /** Done, fenced by the lease; in `db` when it is the handler's transaction. */
  async complete(id: string, owner: string, now = Date.now(), db: Kysely<any> = this.db): Promise<boolean> {
    const r = await this.fenced(id, owner, db)
      .set({ state: 'done', lease_owner: null, lease_until: null, last_error: null, updated_at: now })
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async retry(id: string, owner: string, runAt: number, error: string, now = Date.now()): Promise<boolean> {
    const r = await this.fenced(id, owner)
      .set({ state: 'queued', run_at: runAt, lease_owner: null, lease_until: null, last_error: error, updated_at: now })
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async bury(id: string, owner: string, error: string, now = Date.now()): Promise<boolean> {
    const r = await this.fenced(id, owner)
      .set({ state: 'dead', lease_owner: null, lease_until: null, last_error: error, updated_at: now })
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Give a job back untouched (graceful stop): due at once, the attempt not counted. */
  async release(id: string, owner: string, now = Date.now()): Promise<boolean> {
    const r = await this.fenced(id, owner)
      .set({ state: 'queued', lease_owner: null, lease_until: null, attempts: sql`attempts - 1`, updated_at: now })
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** The earliest run_at of queued jobs, per kind, to sleep until then. */
  async nextRunAtByKind(kinds: string[]): Promise<Map<string, number>> {
    if (!kinds.length) return new Map();
    const rows = await this.db
      .selectFrom('jobs')
      .select(['kind', (eb: any) => eb.fn.min('run_at').as('next')])
      .where('state', '=', 'queued')
      .where('kind', 'in', kinds)
      .groupBy('kind')
      .execute();
    return new Map(rows.filter((r: any) => r.next != null).map((r: any) => [r.kind as string, Number(r.next)]));
  }

  async purgeDone(before: number): Promise<number> {
    const r = await this.db
      .deleteFrom('jobs')
      .where('state', '=', 'done')
      .where('updated_at', '<', before)
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  async counts(): Promise<{ kind: string; state: JobState; n: number }[]> {
    const rows = await this.db
      .selectFrom('jobs')
      .select(['kind', 'state', (eb: any) => eb.fn.countAll().as('n')])
      .groupBy(['kind', 'state'])
      .execute();
    return rows.map((r: any) => ({ kind: r.kind, state: r.state, n: Number(r.n) }));
  }
}
