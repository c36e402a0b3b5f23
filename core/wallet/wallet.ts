import { type Db, deleteHold, entry, give, type LedgerKind, take } from './kysely-wallet.js';
import { syncSettle } from './sync-wallet.js';
import type { DeferredCharge, DeferredCharges, SettleMeta } from './deferred-charges.js';
import { assertMicros, STALE_HOLD_MS, type Hold } from './wallet-reads.js';
import { WalletHolds } from './wallet-holds.js';

export type { LedgerKind } from './kysely-wallet.js';
export { DEFAULT_HOLD_GRACE_MS, STALE_HOLD_MS, type Hold } from './wallet-reads.js';

/**
 * The wallet: a balance per account in integer micro-USD, a ledger of every movement, and
 * holds for calls in flight. Every debit is one conditional UPDATE (`balance >= amount`),
 * atomic on SQLite and PostgreSQL alike, so the balance is exact and never negative however
 * many calls race for it. Its parts: the shared state and balance reads (wallet-reads.ts),
 * reservations (wallet-holds.ts), and here credits, debits and settlements.
 */
export class Wallet extends WalletHolds {
  async open(accountId: string, initialMicros: number, trx: Db = this.db): Promise<void> {
    await this.writing(accountId, async () => {
      await trx
        .insertInto('wallets')
        .values({ account_id: accountId, balance_micros: 0, updated_at: Date.now() })
        .execute();
      if (initialMicros > 0) await this.credit(accountId, initialMicros, 'trial', null, trx);
    });
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
}
