import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { isApiError } from '../errors.js';
import { JobRetry, type JobContext } from '../jobs/types.js';
import { backoffMs } from '../jobs/backoff.js';
import type { Attempt } from '../router/attempt.js';
import type { Router } from '../router/router.js';
import type { VendorRegistry } from '../router/registry.js';
import type { Wallet } from '../wallet/wallet.js';
import type { Events } from '../events/events.js';
import type { OutboxKind, OutboxKindDef, OutboxRecord } from './types.js';
import { holdOf, openAttemptOf, routeOf, rowById, TABLE, toRecord, type OpenAttempt } from './records.js';
import { applyKept } from './early.js';
import { reconcile } from './reconcile.js';

export interface SendDeps {
  db: Kysely<any>;
  router: Router;
  wallet: Wallet;
  vendors: VendorRegistry;
  events: Events;
  log: Logger;
}

export const DEFAULT_MAX_ATTEMPTS = 6;

/**
 * Failure kinds that say the vendor did not act on the request: it never left (connection
 * refused, DNS), or the vendor refused it unread (429). Only these are retried; after anything
 * else (a timeout, a 5xx that may have followed acceptance, a refusal of the message itself)
 * the record fails, since a resend could deliver a message twice.
 */
export const NOT_SENT_KINDS: ReadonlySet<string> = new Set(['not_sent', 'rate_limited']);

/** Whether a failed router call left the message unsent: no vendor at all, or every vendor tried did not act. */
export function notSent(err: unknown): boolean {
  if (!isApiError(err)) return false;
  if (err.code === 'no_vendor_available') return true;
  if (err.code !== 'vendor_error') return false;
  const tried = ((err.details.attempts ?? []) as Attempt[]).filter((a) => a.status !== 'skipped_cost_cap');
  return tried.length > 0 && tried.every((a) => NOT_SENT_KINDS.has(a.status));
}

function failureOf(err: unknown): { code: string; message: string } {
  if (isApiError(err)) return { code: err.code, message: err.message };
  return { code: 'internal_error', message: 'The send failed inside the gateway.' };
}

/** The vendor's refusal of the recipient for good, from the last vendor tried, if that is how the call ended. */
function refusalOf(err: unknown): { code: string; message: string } | undefined {
  if (!isApiError(err)) return undefined;
  const last = ((err.details.attempts ?? []) as Attempt[]).at(-1);
  const code = last?.error?.recipient_refused;
  return code ? { code, message: `${last!.vendor} refused the recipient: ${last!.error!.message}` } : undefined;
}

/** The record's moves the send job makes, each in one transaction with its charge and its event. */
export class SendMoves<D> {
  /** The kind's handle, set once it is made (callbacks kept early are applied through it). */
  kind?: OutboxKind<D, any>;

  constructor(
    private readonly d: SendDeps,
    private readonly def: OutboxKindDef<D, any, any>
  ) {}

  /** The event of entering `state`, if the area has one for it. */
  async emit(trx: Kysely<any>, record: OutboxRecord<D>): Promise<void> {
    const type = this.def.events?.[record.state];
    if (type) await this.d.events.emit(trx, { accountId: record.accountId, type, data: this.def.eventData(record) });
  }

  /**
   * Vendor accepted: sent, its message id, the charge settled, the event; false if the record
   * had moved. With the send's `job`, the job is marked done in the same transaction.
   */
  async sent(row: any, vendor: string, output: unknown, job?: JobContext): Promise<boolean> {
    const def = this.def;
    const before = toRecord<D>(row);
    const route = routeOf(row);
    const input = JSON.parse(row.input);
    let cost: number;
    try {
      cost = this.d.router.charge(def.capability, input, route.find((r) => r.id === vendor) ?? { id: vendor }, output);
    } catch (err) {
      // The send happened: charge what was reserved for it rather than nothing.
      this.d.log.error({ err, record_id: row.record_id, vendor }, 'outbox: the price failed; charging the hold');
      cost = Number(row.hold_micros ?? 0);
    }
    const extra = def.onSent?.(output, before, input) ?? {};
    const messageId = def.vendorMessageId?.(output) ?? null;
    return this.d.db
      .transaction()
      .execute(async (trx) => {
        const hold = holdOf(row);
        const charged = hold ? await this.d.wallet.settleIn(trx, hold, cost, { vendor, ref: row.record_id }) : 0;
        const now = Date.now();
        const data = { ...before.data, ...extra };
        const r = await trx
          .updateTable(TABLE)
          .set({
            state: def.states.sent,
            vendor,
            vendor_message_id: messageId,
            data: JSON.stringify(data),
            input: null,
            attempt_open: null,
            hold_id: null,
            cost_micros: charged,
            error_code: null,
            error_message: null,
            updated_at: now,
          })
          .where('record_id', '=', row.record_id)
          .where('state', '=', def.states.queued)
          .executeTakeFirst();
        if (Number(r.numUpdatedRows) !== 1) throw new Moved();
        const record = {
          ...before,
          state: def.states.sent,
          vendor,
          vendorMessageId: messageId,
          data,
          costMicros: charged,
          error: null,
          updatedAt: now,
        };
        await this.emit(trx, record);
        if (this.kind) await applyKept(trx, def, this.kind, record);
        await job?.completeIn(trx);
        return true;
      })
      .catch((e) => {
        if (e instanceof Moved) return false;
        throw e;
      });
  }

  /**
   * Final failure: failed (or `state`: refused) with its reason, the hold given back, the
   * event; false if the record had moved.
   */
  async failed(row: any, error: { code: string; message: string }, state = this.def.states.failed): Promise<boolean> {
    return this.d.db.transaction().execute(async (trx) => {
      const hold = holdOf(row);
      if (hold) await this.d.wallet.release(hold, trx);
      const now = Date.now();
      const r = await trx
        .updateTable(TABLE)
        .set({
          state,
          input: null,
          attempt_open: null,
          hold_id: null,
          error_code: error.code,
          error_message: error.message.slice(0, 1000),
          updated_at: now,
        })
        .where('record_id', '=', row.record_id)
        .where('state', '=', this.def.states.queued)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) !== 1) return false;
      await this.emit(trx, { ...toRecord<D>(row), state, error, updatedAt: now });
      return true;
    });
  }
}

class Moved extends Error {}

/** What a recorded attempt whose outcome was lost means for the record (see sendHandler). */
function unknownOutcome(open: OpenAttempt, why: 'no_lookup' | 'claimed' = 'no_lookup') {
  const who = open.vendors.join(', ');
  const because =
    why === 'claimed'
      ? 'the only matching message the vendor has belongs to another record'
      : 'the vendor neither de-duplicates by idempotency key nor can be asked what it took';
  return {
    code: 'outcome_unknown',
    message:
      `The gateway stopped after calling ${who} and before recording its answer; ${because}, so the message `
      + 'is not sent again. It may or may not have been sent.',
  };
}

/**
 * The send job of one kind of record. It records the attempt (its own commit) before the
 * router call, which carries the record id as the vendor's idempotency key; the outcome, the
 * charge and the event commit together after it. A run that finds an attempt recorded and no
 * outcome (its node died in between) first asks each vendor that offers the kind's lookup
 * whether it took the message (found: sent with that answer, charged once); it resends only
 * when no vendor took it and every vendor without a lookup honours idempotency keys;
 * otherwise the record fails as `outcome_unknown`, never resent.
 */
export function sendHandler<D>(d: SendDeps, def: OutboxKindDef<D, any, any>, moves: SendMoves<D>) {
  const maxAttempts = def.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  const delay = def.backoffMs ?? ((n: number) => backoffMs(n));
  return async (job: JobContext<{ record_id: string }>): Promise<void> => {
    const row = await rowById(d.db, job.payload.record_id, def.kind);
    if (!row || row.state !== def.states.queued) return;
    const open = openAttemptOf(row);
    if (open) {
      let found: Awaited<ReturnType<typeof reconcile>>;
      try {
        found = await reconcile(d.vendors, def, moves.kind!, row, open, job.signal);
      } catch (err) {
        if (job.signal.aborted) throw err;
        d.log.warn({ err, record_id: row.record_id }, 'outbox: a vendor lookup failed; asking again later');
        throw new JobRetry('a vendor lookup of the lost attempt failed', { delayMs: delay(Number(row.attempts)) });
      }
      if ('unknown' in found) {
        await moves.failed(row, unknownOutcome(open, found.why));
        return;
      }
      if ('found' in found) {
        d.log.info({ record_id: row.record_id, vendor: found.found.vendor }, 'outbox: the vendor had taken it');
        if (!(await moves.sent(row, found.found.vendor, found.found.output, job)))
          d.log.warn({ record_id: row.record_id }, 'outbox: the record moved while its attempt was looked up');
        return;
      }
      d.log.info({ record_id: row.record_id, vendors: open.vendors }, 'outbox: resending (no vendor took it)');
    }
    const route = routeOf(row);
    const n = Number(row.attempts) + 1;
    const attempt: OpenAttempt = { n, vendors: route.map((r) => r.id), at: Date.now() };
    const recorded = await d.db
      .updateTable(TABLE)
      .set({ attempts: n, attempt_open: JSON.stringify(attempt), updated_at: Date.now() })
      .where('record_id', '=', row.record_id)
      .where('state', '=', def.states.queued)
      .where('attempts', '=', Number(row.attempts))
      .executeTakeFirst();
    if (Number(recorded.numUpdatedRows) !== 1) return; // another run moved it meanwhile
    const current = { ...row, attempts: n, attempt_open: JSON.stringify(attempt) };
    let result: { vendor: string; output: unknown };
    try {
      result = await d.router.call(def.capability, JSON.parse(row.input), {
        accountId: row.account_id,
        route,
        idempotencyKey: row.record_id,
        charge: false,
        ref: row.record_id,
        timeoutMs: def.timeoutMs,
        signal: job.signal,
      });
    } catch (err) {
      // Stopped (shutdown, lease lost) while the vendor may have the request: the attempt stays
      // open, and the next run decides by the rule above.
      if (job.signal.aborted) throw err;
      const failure = failureOf(err);
      const refused = def.states.refused !== undefined ? refusalOf(err) : undefined;
      if (refused) {
        await moves.failed(current, refused, def.states.refused);
        return;
      }
      if (!notSent(err)) {
        await moves.failed(current, failure);
        return;
      }
      if (n >= maxAttempts) {
        await moves.failed(current, failure);
        return;
      }
      // Nothing left the gateway: the attempt is closed, and the job tries again later.
      await d.db
        .updateTable(TABLE)
        .set({
          attempt_open: null,
          error_code: failure.code,
          error_message: failure.message.slice(0, 1000),
          updated_at: Date.now(),
        })
        .where('record_id', '=', row.record_id)
        .where('attempts', '=', n)
        .execute();
      throw new JobRetry(failure.message, { delayMs: delay(n) });
    }
    if (!(await moves.sent(current, result.vendor, result.output, job)))
      d.log.warn({ record_id: row.record_id }, 'outbox: the record moved while its send was in flight');
  };
}

/** A job that died without its handler seeing the end (its last node died): the record fails. */
export function onSendExhausted<D>(d: SendDeps, def: OutboxKindDef<D, any, any>, moves: SendMoves<D>) {
  return async (id: string): Promise<void> => {
    const row = await rowById(d.db, id, def.kind);
    if (!row || row.state !== def.states.queued) return;
    const open = openAttemptOf(row);
    await moves.failed(
      row,
      open ? unknownOutcome(open) : { code: 'not_sent', message: 'The send job ran out of attempts.' }
    );
  };
}
