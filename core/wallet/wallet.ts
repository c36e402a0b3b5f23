import type { CompiledQuery, Kysely } from 'kysely';
import { newId } from '../ids.js';
import { apiError } from '../errors.js';
import { formatUsd } from './money.js';
import type { SyncSqlite } from '../db/open.js';
import { syncBalance, syncRelease, syncReserve, syncSettle } from './sync-wallet.js';
import { MemoryHolds } from './memory-holds.js';
import { ChargeQueue } from './charge-queue.js';
import { BalanceCache } from './balance-cache.js';
import { type Db, deleteHold, entry, give, insertHold, type LedgerKind, take } from './kysely-wallet.js';
import type { DeferredCharge, DeferredCharges, SettleMeta } from './deferred-charges.js';

export type { LedgerKind } from './kysely-wallet.js';

/**
 * How long a hold taken without a deadline (a chat batch, which refreshes it at every poll)
 * stays held: past it, it belongs to something that died with its process.
 */
export const STALE_HOLD_MS = 30 * 60_000;

/** Margin after a call's deadline before its hold counts as left behind (`wallet.hold_grace_seconds`). */
export const DEFAULT_HOLD_GRACE_MS = 60_000;

/** What a reservation holds until it is settled or released. */
export interface Hold {
  holdId: string;
  accountId: string;
  amount: number;
  capability: string;
}

/**
 * The wallet: a balance per account in integer micro-USD, a ledger of every movement, and
 * holds for calls in flight. Every debit is one conditional UPDATE (`balance >= amount`),
 * atomic on SQLite and PostgreSQL alike, so the balance is exact and never negative however
 * many calls race for it.
 */
export class Wallet {
  /** `sync`: SQLite's connection, for the hot path (sync-wallet.ts) when no transaction holds it. */
  /**
   * `holdGraceMs`: how long after its call's deadline a hold is still the call's to settle
   * (the answer is being read, the settle is on its way); after that releaseExpired gives it back.
   * `memoryHolds`: this process alone writes the SQLite file (owner-lock.ts), so the holds of
   * calls with a deadline are kept in memory (memory-holds.ts), not written, and their charges
   * are written after the response (charge-queue.ts).
   */
  constructor(
    private readonly db: Kysely<any>,
    private readonly sync?: SyncSqlite,
    private readonly holdGraceMs = DEFAULT_HOLD_GRACE_MS,
    memoryHolds = false,
    log?: { error(obj: object, msg: string): void }
  ) {
    if (!memoryHolds || !sync) return;
    this.holds = new MemoryHolds();
    this.queue = new ChargeQueue(
      sync,
      (accountId, micros) => this.cached.spent(accountId, micros),
      (err, n) => log?.error({ err, charges: n }, 'could not write wallet charges: those calls go uncharged')
    );
  }

  private readonly holds?: MemoryHolds;
  private readonly queue?: ChargeQueue;

  /**
   * What `accountId`'s holds kept in memory amount to: part of the `balance_micros` column but
   * not of the balance, as a hold written to `wallet_holds` is taken from the column.
   */
  held(accountId: string): number {
    return this.holds ? this.holds.held(accountId) + this.queue!.pending(accountId) : 0;
  }

  private syncFree(): SyncSqlite | undefined {
    return this.sync?.free() ? this.sync : undefined;
  }

  async open(accountId: string, initialMicros: number, trx: Db = this.db): Promise<void> {
    await this.writing(accountId, async () => {
      await trx
        .insertInto('wallets')
        .values({ account_id: accountId, balance_micros: 0, updated_at: Date.now() })
        .execute();
      if (initialMicros > 0) await this.credit(accountId, initialMicros, 'trial', null, trx);
    });
  }

  // The balance read is on every metered response and GET /v1/account/balance: compiled once
  // (the SQL differs by dialect, so Kysely writes it) and then run with each account's id.
  private balanceQuery?: CompiledQuery;

  /** Balances read on SQLite's free connection, kept a moment (balance-cache.ts). */
  private readonly cached = new BalanceCache();

  /** Run a write of `accountId`'s balance with its cached balance dropped around it. */
  private async writing<T>(accountId: string, fn: () => Promise<T> | T): Promise<T> {
    this.cached.forget(accountId);
    try {
      return await fn();
    } finally {
      this.cached.forget(accountId);
    }
  }

  async balance(accountId: string, trx: Db = this.db): Promise<number> {
    this.balanceQuery ??= this.db.selectFrom('wallets').select('balance_micros').where('account_id', '=', '').compile();
    const sync = trx === this.db ? this.syncFree() : undefined;
    if (sync) {
      return this.column(sync, accountId) - this.held(accountId);
    }
    const { rows } = await trx.executeQuery<{ balance_micros: number }>({
      ...this.balanceQuery,
      parameters: [accountId],
    });
    return (rows[0] ? Number(rows[0].balance_micros) : 0) - this.held(accountId);
  }

  /** How many holds of `accountId` are kept in memory (rows in `wallet_holds` are the others). */
  holdsInMemory(accountId: string): number {
    return this.holds?.count(accountId) ?? 0;
  }

  /** The `balance_micros` column on the free SQLite connection, kept a moment (see `cached`). */
  private column(sync: SyncSqlite, accountId: string): number {
    const hit = this.cached.get(accountId);
    if (hit !== undefined) return hit;
    const micros = syncBalance(sync, accountId);
    this.cached.set(accountId, micros);
    return micros;
  }

  async credit(
    accountId: string,
    micros: number,
    kind: LedgerKind,
    ref: string | null,
    trx: Db = this.db
  ): Promise<void> {
    if (!Number.isInteger(micros) || micros < 0)
      throw new Error(`credit must be a non-negative integer of micro-USD, got ${micros}`);
    const run = async (q: Db) => {
      await give(q, accountId, micros);
      await entry(q, accountId, micros, kind, ref);
    };
    await this.writing(accountId, () => (trx === this.db ? this.db.transaction().execute(run) : run(trx)));
  }

  /** Take money now (tier price, a fixed fee); 402 if the balance cannot cover it. */
  async debit(
    accountId: string,
    micros: number,
    kind: LedgerKind,
    ref: string | null,
    trx: Db = this.db,
    meta: { capability?: string; vendor?: string } = {}
  ): Promise<void> {
    const run = async (q: Db) => {
      if (!(await take(q, accountId, micros, this.held(accountId))))
        throw await this.insufficient(q, accountId, micros);
      await entry(q, accountId, -micros, kind, ref, meta);
    };
    await this.writing(accountId, () => (trx === this.db ? this.db.transaction().execute(run) : run(trx)));
  }

  /**
   * Hold an upper bound of a call's cost before the vendor is called. `deadline` (epoch ms):
   * when the call gives up; the hold expires `holdGraceMs` after it (STALE_HOLD_MS from now
   * without one), and releaseExpired gives it back if nothing settled it by then. `trx`: taken
   * in the caller's transaction, a row (settleIn and release then take the same `trx`, or none).
   */
  async reserve(accountId: string, micros: number, capability: string, deadline?: number, trx?: Db): Promise<Hold> {
    assertMicros(micros, 'reserve');
    const amount = Math.max(0, Math.ceil(micros));
    const hold: Hold = { holdId: newId('hold'), accountId, amount, capability };
    const expiresAt = (deadline ?? Date.now() + STALE_HOLD_MS) + this.holdGraceMs;
    // In the caller's transaction (an outbox record's hold): a row, committed with its writes.
    if (trx && trx !== this.db) {
      await this.writing(accountId, async () => {
        if (!(await take(trx, accountId, amount, this.held(accountId))))
          throw await this.insufficient(trx, accountId, amount);
        await insertHold(trx, hold, expiresAt);
      });
      return hold;
    }
    const sync = this.syncFree();
    // A hold without a deadline (a chat batch's) outlives a restart: it stays a row.
    if (sync && this.holds && deadline !== undefined) {
      // Synchronous from the read to the add: no other reserve can come between them.
      if (this.column(sync, accountId) - this.held(accountId) < amount)
        throw await this.insufficient(this.db, accountId, amount);
      this.holds.add(hold.holdId, accountId, amount, expiresAt);
      return hold;
    }
    if (sync) {
      const held = syncReserve(sync, hold.holdId, accountId, amount, capability, expiresAt, this.held(accountId));
      this.cached.forget(accountId);
      if (!held) throw await this.insufficient(this.db, accountId, amount);
      return hold;
    }
    await this.writing(accountId, () =>
      this.db.transaction().execute(async (q) => {
        if (!(await take(q, accountId, amount, this.held(accountId))))
          throw await this.insufficient(q, accountId, amount);
        await insertHold(q, hold, expiresAt);
      })
    );
    return hold;
  }

  /**
   * Turn a hold into a charge of `actual` micro-USD: the rest goes back. A charge above the
   * hold takes what the balance allows and no more, so the balance never goes negative.
   * Settling twice does nothing the second time (the hold row is the once-only guard). With
   * `later` (a request holding an idempotency claim) the charge is decided now and written with
   * the request's answer (deferred-charges.ts).
   */
  async settle(hold: Hold, actual: number, meta: SettleMeta = {}, later?: DeferredCharges): Promise<number> {
    assertMicros(actual, 'settle');
    const want = Math.max(0, Math.round(actual));
    if (later) {
      // Decided now, as the response will say; written with the request's answer (settleDeferred).
      const extra = want - hold.amount;
      const charged =
        extra <= 0 ? want : hold.amount + Math.max(0, Math.min(extra, await this.balance(hold.accountId)));
      if (later.add({ hold, charged, meta })) {
        // Held until the answer is stored, which may be past this call's deadline (a request
        // of several calls): the sweep must not give it back meanwhile, or the call goes free.
        await this.refresh(hold);
        return charged;
      }
    }
    if (this.holds?.remove(hold.holdId)) return this.charge(hold, want, meta);
    const sync = this.syncFree();
    if (sync) {
      const { charged, balance } = syncSettle(sync, hold, want, meta, this.held(hold.accountId));
      this.cached.set(hold.accountId, balance);
      return charged;
    }
    return this.writing(hold.accountId, () =>
      this.db.transaction().execute((q) => this.settleRow(q, hold, want, meta))
    );
  }

  /** Settle a hold written to `wallet_holds`, on `q`; 0 when it was settled or released already. */
  private async settleRow(q: Db, hold: Hold, want: number, meta: SettleMeta): Promise<number> {
    if (!(await deleteHold(q, hold.holdId))) return 0;
    let charged = want;
    if (want <= hold.amount) {
      if (hold.amount > want) await give(q, hold.accountId, hold.amount - want);
    } else {
      charged = hold.amount + (await this.takeUpTo(q, hold.accountId, want - hold.amount));
    }
    await entry(q, hold.accountId, -charged, 'usage', meta.ref ?? hold.holdId, {
      ...meta,
      capability: hold.capability,
    });
    return charged;
  }

  /**
   * Write the charges a request deferred (DeferredCharges) on `q`, the transaction that stores
   * its idempotent answer, or alone when there is none to store.
   */
  async settleDeferred(q: Db, charges: readonly DeferredCharge[]): Promise<void> {
    for (const c of charges) {
      // A hold in memory leaves it as the charge is written: put back should `q` roll back.
      c.inMemory = this.holds?.has(c.hold.holdId);
      await this.settleIn(q, c.hold, c.charged, c.meta);
    }
  }

  /** After settleDeferred's transaction rolled back: its holds are held again, to release or settle. */
  rolledBack(charges: readonly DeferredCharge[]): void {
    for (const c of charges) {
      if (c.inMemory && !this.holds!.has(c.hold.holdId))
        this.holds!.add(c.hold.holdId, c.hold.accountId, c.hold.amount, Date.now() + STALE_HOLD_MS + this.holdGraceMs);
      c.inMemory = false;
    }
  }

  /**
   * Settle on `q`, a transaction that writes what the charge belongs with (a batch's move to
   * succeeded, a stored answer): both commit or neither does. Once-only, as settle.
   */
  async settleIn(q: Db, hold: Hold, actual: number, meta: SettleMeta = {}): Promise<number> {
    assertMicros(actual, 'settle');
    const want = Math.max(0, Math.round(actual));
    return this.writing(hold.accountId, () =>
      this.holds?.remove(hold.holdId) ? this.chargeOn(q, hold, want, meta) : this.settleRow(q, hold, want, meta)
    );
  }

  /** The holds of deferred charges whose transaction rolled back, given back: nothing was charged. */
  async releaseDeferred(charges: readonly DeferredCharge[]): Promise<void> {
    this.rolledBack(charges);
    for (const c of charges) await this.release(c.hold);
  }

  /**
   * Charge a hold kept in memory, already removed (the once-only guard). Should the charge fail,
   * the hold is gone all the same: the call costs nothing, as when the sweep gives a hold back.
   */
  private async charge(hold: Hold, want: number, meta: SettleMeta) {
    const sync = this.syncFree();
    if (sync) {
      // The column first: reading it may write queued charges, which moves `held`.
      const column = this.column(sync, hold.accountId);
      const charged = Math.max(0, Math.min(want, column - this.held(hold.accountId)));
      this.queue!.add({ ...meta, ...hold, charged, at: Date.now() });
      return charged;
    }
    return this.writing(hold.accountId, () => this.db.transaction().execute((q) => this.chargeOn(q, hold, want, meta)));
  }

  /** Charge a hold kept in memory, already removed, on `q`. */
  private async chargeOn(q: Db, hold: Hold, want: number, meta: SettleMeta): Promise<number> {
    const charged = await this.takeUpTo(q, hold.accountId, want);
    await entry(q, hold.accountId, -charged, 'usage', meta.ref ?? hold.holdId, {
      ...meta,
      capability: hold.capability,
    });
    return charged;
  }

  /**
   * Give a hold back in full (the call failed or was never made); on `q`, a transaction that
   * writes what the release belongs with (a batch's move to canceled), so both commit or neither.
   */
  async release(hold: Hold, q?: Db): Promise<void> {
    // A hold in memory was never taken from the balance column: forgetting it gives it back.
    if (this.holds?.remove(hold.holdId)) return;
    if (!q) return void (await this.releaseRow(hold));
    await this.writing(hold.accountId, async () => {
      if (await deleteHold(q, hold.holdId)) await give(q, hold.accountId, hold.amount);
    });
  }

  /**
   * Give a hold's row back; with `expiredBefore`, only if it was not refreshed since it was read
   * as expired. True when this call gave it back.
   */
  private async releaseRow(hold: Hold, expiredBefore?: number): Promise<boolean> {
    const sync = this.syncFree();
    if (sync) {
      const given = syncRelease(sync, hold, expiredBefore);
      this.cached.forget(hold.accountId);
      return given;
    }
    return this.writing(hold.accountId, () =>
      this.db.transaction().execute(async (q) => {
        if (!(await deleteHold(q, hold.holdId, expiredBefore))) return false;
        await give(q, hold.accountId, hold.amount);
        return true;
      })
    );
  }

  /**
   * Mark a long-lived hold (a chat batch waiting on its vendor for hours) as still owned: its
   * expiry moves STALE_HOLD_MS (+ grace) from now, so it is not taken for one a dead call left
   * behind. False: it is gone.
   */
  async refresh(hold: Hold): Promise<boolean> {
    if (this.holds?.extend(hold.holdId, Date.now() + STALE_HOLD_MS + this.holdGraceMs)) return true;
    const r = await this.db
      .updateTable('wallet_holds')
      .set({ expires_at: Date.now() + STALE_HOLD_MS + this.holdGraceMs })
      .where('hold_id', '=', hold.holdId)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /**
   * Holds past their expiry belong to calls that died with their process (a live call settles
   * or releases its hold by its deadline): give them back. Safe on several nodes at once: each
   * hold's release is once-only.
   */
  async releaseExpired(now = Date.now()): Promise<number> {
    const dropped = this.holds?.dropExpired(now) ?? 0;
    const rows = await this.db.selectFrom('wallet_holds').selectAll().where('expires_at', '<', now).execute();
    // Each release checks the expiry again: a batch may refresh its hold between this read and
    // its release (a node restarting past a hold's expiry while the batch's poll runs).
    let released = 0;
    for (const r of rows) {
      const hold = {
        holdId: r.hold_id,
        accountId: r.account_id,
        amount: Number(r.amount_micros),
        capability: r.capability,
      };
      if (await this.releaseRow(hold, now)) released++;
    }
    return dropped + released;
  }

  /**
   * Take `micros`, or as much of it as the balance holds; returns what was taken. The balance
   * read and the conditional take are two statements, so a concurrent debit in between makes
   * the take miss: read again rather than record money that was never taken.
   */
  private async takeUpTo(q: Db, accountId: string, micros: number): Promise<number> {
    for (let round = 0; round < 5; round++) {
      if (await take(q, accountId, micros, this.held(accountId))) return micros;
      const left = Math.min(micros, await this.balance(accountId, q));
      if (left <= 0) return 0;
      if (await take(q, accountId, left, this.held(accountId))) return left;
    }
    return 0;
  }

  private async insufficient(q: Db, accountId: string, micros: number) {
    const bal = await this.balance(accountId, q);
    return apiError(
      'insufficient_balance',
      `Balance ${formatUsd(bal)} USD is below the ${formatUsd(micros)} USD this call reserves. Top up with POST /v1/account/topup.`,
      { details: { balance_usd: bal / 1e6, required_usd: micros / 1e6 } }
    );
  }
}

/** NaN or Infinity would pass the balance's CHECK as NULL on SQLite: refuse them outright. */
function assertMicros(micros: number, what: string): void {
  if (typeof micros !== 'number' || !Number.isFinite(micros))
    throw new Error(`wallet ${what}: ${String(micros)} is not an amount of micro-USD`);
}
