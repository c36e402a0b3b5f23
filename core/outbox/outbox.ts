import type { Kysely } from 'kysely';
import { apiError } from '../errors.js';
import { newId } from '../ids.js';
import type { JobsEngine } from '../jobs/engine.js';
import { newestFirst } from '../db/newest-first.js';
import { decodeCursor, pageOf } from '../http/pagination.js';
import type { RetentionTask } from '../retention/retention.js';
import { DEFAULT_MAX_ATTEMPTS, onSendExhausted, SendMoves, sendHandler, type SendDeps } from './send-job.js';
import { rowById, TABLE, toRecord } from './records.js';
import { earlyRetention, keepEarly } from './early.js';
import type {
  AcceptInput,
  MovePatch,
  OutboxKind,
  OutboxKindDef,
  OutboxListQuery,
  OutboxRecord,
  OutboxRoute,
} from './types.js';

export * from './types.js';
export { NOT_SENT_KINDS } from './send-job.js';

/**
 * How long an accepted record's hold stays the record's: its send job settles or releases it
 * long before (a few retries); past this, the wallet's sweep gives back one a lost job left.
 */
const HOLD_TTL_MS = 24 * 3600_000;

/** Attempts of the send job beyond the record's own: runs that only find and close a lost attempt. */
const SPARE_JOB_ATTEMPTS = 2;

/**
 * The durable outbox (issue 29): an area accepts a send into a row in its own transaction
 * (with the idempotent answer and the wallet hold) and answers at once; a job sends it through
 * the router. Areas register their kind of record at build time and keep the handle.
 */
export class Outbox {
  private readonly kinds = new Map<string, OutboxKind<any, any>>();

  constructor(private readonly d: SendDeps & { jobs: JobsEngine }) {}

  /** One kind of record (`email`, `sms`) and its send job; at build time, in the area's register(). */
  register<D = Record<string, unknown>, I = unknown, O = unknown>(def: OutboxKindDef<D, I, O>): OutboxKind<D, I> {
    if (this.kinds.has(def.kind)) throw new Error(`outbox kind "${def.kind}" is registered twice`);
    for (const type of Object.values(def.events ?? {}))
      if (!this.d.events.isDeclared(type))
        throw new Error(`outbox kind "${def.kind}": event "${type}" is not declared`);
    const moves = new SendMoves<D>(this.d, def);
    this.d.jobs.register(jobKind(def.kind), sendHandler(this.d, def, moves), {
      concurrency: def.concurrency,
      onExhausted: onSendExhausted(this.d, def, moves),
    });
    const handle = new KindHandle<D, I>(this.d, def, moves);
    moves.kind = handle;
    this.kinds.set(def.kind, handle);
    return handle;
  }

  /** The retention of the outbox's own table of early callbacks (for svc.retention, at build time). */
  retention(): RetentionTask {
    return earlyRetention(this.d.db);
  }

  /** A registered kind's handle, by its name (for an area's other parts, and tests). */
  kind<D = Record<string, unknown>, I = unknown>(name: string): OutboxKind<D, I> | undefined {
    return this.kinds.get(name);
  }
}

export function jobKind(kind: string): string {
  return `outbox.send.${kind}`;
}

class KindHandle<D, I> implements OutboxKind<D, I> {
  constructor(
    private readonly d: SendDeps & { jobs: JobsEngine },
    readonly def: OutboxKindDef<D, I, any>,
    private readonly moves: SendMoves<D>
  ) {}

  /** The record an earlier accept with this dedupe key made, if any. */
  private async seen(trx: Kysely<any>, accountId: string, dedupeKey: string | undefined) {
    if (dedupeKey === undefined) return undefined;
    const row = await trx
      .selectFrom(TABLE)
      .selectAll()
      .where('account_id', '=', accountId)
      .where('kind', '=', this.def.kind)
      .where('dedupe_key', '=', dedupeKey)
      .executeTakeFirst();
    return row ? toRecord<D>(row) : undefined;
  }

  async accept(trx: Kysely<any>, a: AcceptInput<D, I>): Promise<{ record: OutboxRecord<D>; created: boolean }> {
    const { def } = this;
    const seen = await this.seen(trx, a.accountId, a.dedupeKey);
    if (seen) return { record: seen, created: false };
    const route = a.route ?? this.planUnplanned(a);
    const now = Date.now();
    const { hold, route: kept } = await this.d.router.reserve(def.capability, a.input, {
      accountId: a.accountId,
      route,
      trx,
      deadline: now + HOLD_TTL_MS,
    });
    const id = a.id ?? newId(def.idPrefix);
    const row = {
      record_id: id,
      account_id: a.accountId,
      kind: def.kind,
      dedupe_key: a.dedupeKey ?? null,
      state: def.states.queued,
      capability: def.capability,
      input: JSON.stringify(a.input),
      data: JSON.stringify(a.data),
      // The plans without any caller credentials (BYOK): those are never stored.
      route: JSON.stringify(kept.map((r) => ({ id: r.id, ...(r.plan === undefined ? {} : { plan: r.plan }) }))),
      hold_id: hold.holdId,
      hold_micros: hold.amount,
      vendor: a.vendor ?? null,
      vendor_message_id: null,
      attempts: 0,
      attempt_open: null,
      cost_micros: 0,
      error_code: null,
      error_message: null,
      created_at: now,
      updated_at: now,
    };
    await trx.insertInto(TABLE).values(row).execute();
    const maxAttempts = (def.maxAttempts ?? DEFAULT_MAX_ATTEMPTS) + SPARE_JOB_ATTEMPTS;
    await this.d.jobs.enqueue({ kind: jobKind(def.kind), id, payload: { record_id: id }, maxAttempts }, trx);
    return { record: toRecord<D>(row), created: true };
  }

  async recordUnsent(
    trx: Kysely<any>,
    r: Pick<AcceptInput<D, I>, 'accountId' | 'data' | 'dedupeKey' | 'id'> & {
      state: string;
      error?: { code: string; message: string };
    }
  ): Promise<{ record: OutboxRecord<D>; created: boolean }> {
    const seen = await this.seen(trx, r.accountId, r.dedupeKey);
    if (seen) return { record: seen, created: false };
    const now = Date.now();
    const row = {
      record_id: r.id ?? newId(this.def.idPrefix),
      account_id: r.accountId,
      kind: this.def.kind,
      dedupe_key: r.dedupeKey ?? null,
      state: r.state,
      capability: this.def.capability,
      input: null,
      data: JSON.stringify(r.data),
      route: '[]',
      hold_id: null,
      hold_micros: null,
      vendor: null,
      vendor_message_id: null,
      attempts: 0,
      attempt_open: null,
      cost_micros: 0,
      error_code: r.error?.code ?? null,
      error_message: r.error?.message ?? null,
      created_at: now,
      updated_at: now,
    };
    await trx.insertInto(TABLE).values(row).execute();
    const record = toRecord<D>(row);
    await this.moves.emit(trx, record);
    return { record, created: true };
  }

  /** The candidates in order: the capability's planner's (or area price's), else the route's instances. */
  async plan(a: Pick<AcceptInput<D, I>, 'accountId' | 'vendor' | 'region' | 'request'>): Promise<OutboxRoute> {
    const { router } = this.d;
    const cap = this.def.capability;
    const sel = { vendor: a.vendor, region: a.region };
    if (router.plannerOptions(cap) !== undefined)
      return router.plan(cap, { ...sel, accountId: a.accountId, request: a.request });
    return this.planUnplanned(a);
  }

  /**
   * Inside accept's transaction, without a `route`: only a capability without a planner, whose
   * candidates are the route's instances (no database read). A planner may read the database
   * (the caller's own keys), which the caller's transaction holds on SQLite: that is `plan()`'s,
   * before the transaction.
   */
  private planUnplanned(a: Pick<AcceptInput<D, I>, 'vendor' | 'region'>): OutboxRoute {
    const { router } = this.d;
    const cap = this.def.capability;
    if (router.plannerOptions(cap) !== undefined)
      throw new Error(
        `outbox kind "${this.def.kind}": ${cap} has a planner; plan() before the transaction, pass route`
      );
    const sel = { vendor: a.vendor, region: a.region };
    router.assertServed(cap, sel);
    return router.candidates(cap, sel).map((c) => ({ id: c.id }));
  }

  early(vendor: string, vendorMessageId: string, payload: unknown): Promise<'applied' | 'kept'> {
    return keepEarly(this.d.db, this.def, this, vendor, vendorMessageId, payload);
  }

  async find(accountId: string, id: string, db: Kysely<any> = this.d.db): Promise<OutboxRecord<D> | undefined> {
    const row = await rowById(db, id, this.def.kind);
    return row && row.account_id === accountId ? toRecord<D>(row) : undefined;
  }

  async get(accountId: string, id: string, db?: Kysely<any>): Promise<OutboxRecord<D>> {
    const r = await this.find(accountId, id, db);
    if (!r) throw apiError('not_found', `No ${this.def.kind} ${id} in this account.`, { param: 'id' });
    return r;
  }

  async list(accountId: string, q: OutboxListQuery) {
    let query = this.d.db
      .selectFrom(TABLE)
      .selectAll()
      .where('account_id', '=', accountId)
      .where('kind', '=', this.def.kind);
    if (q.state !== undefined) query = query.where('state', '=', q.state);
    const rows = await newestFirst(query, 'record_id', q.limit + 1, decodeCursor(q.cursor)).execute();
    return pageOf(
      rows,
      q.limit,
      (r: any) => ({ t: Number(r.created_at), id: r.record_id }),
      (r) => toRecord<D>(r)
    );
  }

  async findByVendorMessage(vendor: string, vendorMessageId: string, db: Kysely<any> = this.d.db) {
    const row = await db
      .selectFrom(TABLE)
      .selectAll()
      .where('vendor', '=', vendor)
      .where('vendor_message_id', '=', vendorMessageId)
      .where('kind', '=', this.def.kind)
      .executeTakeFirst();
    return row ? toRecord<D>(row) : undefined;
  }

  async move(trx: Kysely<any>, id: string, to: string, patch: MovePatch<D> = {}) {
    const row = await rowById(trx, id, this.def.kind);
    if (!row) return { moved: false, record: undefined };
    const before = toRecord<D>(row);
    if (!this.def.moves[row.state]?.includes(to)) return { moved: false, record: before };
    const now = Date.now();
    const data = { ...before.data, ...(patch.data ?? {}) } as D;
    const vendorMessageId = patch.vendorMessageId ?? before.vendorMessageId;
    const r = await trx
      .updateTable(TABLE)
      .set({ state: to, data: JSON.stringify(data), vendor_message_id: vendorMessageId, updated_at: now })
      .where('record_id', '=', id)
      .where('state', '=', row.state)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) !== 1) return { moved: false, record: await this.find(row.account_id, id, trx) };
    const record = { ...before, state: to, data, vendorMessageId, updatedAt: now };
    await this.moves.emit(trx, record);
    return { moved: true, record };
  }
}
