import type { Kysely } from 'kysely';
import type { Planned, Routed } from '../router/planner.js';

// What an area gives and gets of the outbox (core/outbox/outbox.ts): a durable send whose
// record is an outbox row plus the area's own JSON (`data`), so an area keeps no table of its own.

/** One record, as an area reads it. `data` is the area's own JSON (to, subject, segments…). */
export interface OutboxRecord<D = Record<string, unknown>> {
  id: string;
  accountId: string;
  kind: string;
  state: string;
  data: D;
  /** The vendor instance that accepted the send (or the one pinned, until then); null before. */
  vendor: string | null;
  /** The vendor's id of the message, what its status callbacks name. */
  vendorMessageId: string | null;
  /** Send attempts made, the not-sent ones included. */
  attempts: number;
  /** What the send was charged, in micro-USD (0 until it is settled, and when it failed). */
  costMicros: number;
  /**
   * Why the record failed: a failure kind, an API error code, or `outcome_unknown`; in the
   * `refused` state, the vendor's own code of the refusal.
   */
  error: { code: string; message: string } | null;
  createdAt: number;
  updatedAt: number;
}

/** An area's kind of record: its capability, its state names, the moves and events of its states. */
export interface OutboxKindDef<D = Record<string, unknown>, I = unknown, O = unknown> {
  /** The record kind (`email`, `sms`), unique in the gateway; also the send job's kind suffix. */
  kind: string;
  /** Prefix of the record ids (`em` makes `em_…`). */
  idPrefix: string;
  /** The vendor capability the send job calls (`email.send`). */
  capability: string;
  /**
   * The area's names for the states the send job itself moves between; `refused` (optional):
   * where a send ends when its vendor refuses the recipient for good (`recipientRefused` of a
   * VendorFailure), uncharged; without it such a send is `failed`.
   */
  states: { queued: string; sent: string; failed: string; refused?: string };
  /**
   * The capability that finds a message a vendor already accepted for a send whose outcome a
   * crash lost (`sms.find`: input `{ send, since }`, output the send's own output or null). A
   * vendor of the route that offers it is asked before anything is resent.
   */
  find?: string;
  /**
   * Applies a vendor callback that came before the send job kept the vendor's message id
   * (handed to `early`), in the transaction that moves the record to sent.
   */
  applyEarly?(trx: Kysely<any>, record: OutboxRecord<D>, payload: unknown, kind: OutboxKind<D, I>): Promise<void>;
  /**
   * The moves `move()` may make (status callbacks: sent → delivered…), from → the states it may
   * go to. The send job's own moves (queued → sent, queued → failed) need not be listed.
   */
  moves: Record<string, readonly string[]>;
  /** The event emitted on entering a state (declared with `svc.events.declare`); unlisted states emit none. */
  events?: Record<string, string>;
  /** The event's `data`: the record as the area's API shows it. */
  eventData(record: OutboxRecord<D>): Record<string, unknown>;
  /** The vendor's id of the message in the capability's output. */
  vendorMessageId?(output: O): string | undefined;
  /** Area data to merge into `data` once a vendor accepted (the segments it counted…); `input` as accepted. */
  onSent?(output: O, record: OutboxRecord<D>, input: I): Partial<D> | undefined;
  /** Send attempts in all, not-sent failures included (default 6). */
  maxAttempts?: number;
  /** Delay in ms before the attempt after the n-th (1-based) not-sent failure (default: core backoff from 1 s). */
  backoffMs?(attempt: number): number;
  /** The router call's time limit in ms (default 60 s). */
  timeoutMs?: number;
  /** Jobs of this kind a node runs at once (default: the jobs engine's). */
  concurrency?: number;
}

/** What `accept` is given. */
export interface AcceptInput<D, I> {
  accountId: string;
  /** The capability's input, as the send job hands it to the router (kept until the send is final). */
  input: I;
  /** The area's JSON, stored with the record. */
  data: D;
  /** A vendor instance the caller pinned (`vendor` of the request). */
  vendor?: string;
  /** The account's region (principal.region). */
  region?: string;
  /** The area's planning input, when its capability has a planner. */
  request?: unknown;
  /**
   * Makes the accept once-only per account and kind: a second accept with this key returns the
   * first record and writes, reserves and enqueues nothing.
   */
  dedupeKey?: string;
  /** Use this record id (already made by the area); else a new `idPrefix_…` one. */
  id?: string;
  /**
   * The candidates `plan()` answered before the caller's transaction opened: needed when the
   * capability has a planner (planning may read the database, which a transaction holds on SQLite).
   */
  route?: OutboxRoute;
}

/** The candidates of a send, in order, as `plan()` answers them. */
export type OutboxRoute = Array<Routed<Planned>>;

/** A move requested by a status callback: the state to go to and what to merge. */
export interface MovePatch<D> {
  data?: Partial<D>;
  vendorMessageId?: string;
}

/** A list page's query, per the conventions (newest first). */
export interface OutboxListQuery {
  state?: string;
  limit: number;
  cursor?: string;
}

/** One area's handle on its kind of records. */
export interface OutboxKind<D = Record<string, unknown>, I = unknown> {
  readonly def: OutboxKindDef<D, I, any>;
  /**
   * In the caller's transaction: reserve the send's cost, insert the record in the queued
   * state and schedule its send job. 503 no_vendor_available / 402 insufficient_balance throw
   * before anything is written (the caller's transaction rolls back).
   */
  accept(trx: Kysely<any>, a: AcceptInput<D, I>): Promise<{ record: OutboxRecord<D>; created: boolean }>;
  /**
   * Before the caller's transaction: the send's candidates (its planner's, or the route's
   * instances), for `accept`'s `route`; 503 no_vendor_available when none is left.
   */
  plan(a: Pick<AcceptInput<D, I>, 'accountId' | 'vendor' | 'region' | 'request'>): Promise<OutboxRoute>;
  /**
   * In the caller's transaction: a record that is never sent (`suppressed`, `rejected`: the
   * recipient opted out), in that state from the start: no hold, no job, no vendor; the state's
   * event is emitted. `dedupeKey` and `id` as for accept.
   */
  recordUnsent(
    trx: Kysely<any>,
    r: Pick<AcceptInput<D, I>, 'accountId' | 'data' | 'dedupeKey' | 'id'> & {
      state: string;
      error?: { code: string; message: string };
    }
  ): Promise<{ record: OutboxRecord<D>; created: boolean }>;
  /** The record, or undefined when there is none of this kind in this account. */
  find(accountId: string, id: string, db?: Kysely<any>): Promise<OutboxRecord<D> | undefined>;
  /** The record, or 404 not_found (another account's record included). */
  get(accountId: string, id: string, db?: Kysely<any>): Promise<OutboxRecord<D>>;
  /** Newest first, optionally one state; `{ items, next_cursor }`. */
  list(accountId: string, q: OutboxListQuery): Promise<{ items: OutboxRecord<D>[]; next_cursor: string | null }>;
  /** The record a vendor's status callback names (any account: the callback comes from the vendor). */
  findByVendorMessage(vendor: string, vendorMessageId: string, db?: Kysely<any>): Promise<OutboxRecord<D> | undefined>;
  /**
   * A vendor callback naming a message id no record has yet (the vendor answered the send, the
   * job has not committed): applied at once if the record has it by now, else kept a day and
   * applied (`applyEarly`) in the transaction that records the id.
   */
  early(vendor: string, vendorMessageId: string, payload: unknown): Promise<'applied' | 'kept'>;
  /**
   * A status callback's move, in the caller's transaction: when `moves` allows it from the
   * record's state, the state changes, `patch` is merged and the state's event is emitted;
   * otherwise nothing changes (`moved: false`, the area answers 409 invalid_state if it must).
   */
  move(
    trx: Kysely<any>,
    id: string,
    to: string,
    patch?: MovePatch<D>
  ): Promise<{ moved: boolean; record: OutboxRecord<D> | undefined }>;
}
