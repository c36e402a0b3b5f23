import { newId } from '../ids.js';
import { syncRelease, syncReserve } from './sync-wallet.js';
import { deleteHold, give, insertHold, take, type Db } from './kysely-wallet.js';
import { assertMicros, STALE_HOLD_MS, WalletReads, type Hold } from './wallet-reads.js';

/**
 * The wallet's reservations: a hold taken before a vendor is called, given back when the call
 * fails, kept alive while a long call waits, and swept back when its call died with its
 * process. Settling a hold into a charge is wallet.ts's.
 */
export class WalletHolds extends WalletReads {
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
}
