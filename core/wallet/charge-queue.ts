import type { SyncSqlite } from '../db/open.js';
import { syncChargeMany, type Charge } from './sync-wallet.js';

/**
 * Charges of holds kept in memory (memory-holds.ts), decided at settle and written a moment
 * later, several to a transaction: the commit (most of a settle's cost) then comes after the
 * response, not before it, and once for all the calls that ended meanwhile. Until written, a
 * charge counts as held (`pending`), so the balance shown, every reserve and every take leave
 * it out. They are written at the next turn of the event loop, and before any other statement
 * runs on the connection outside a transaction (open.ts's `beforeStatements`), so whatever
 * reads the ledger or the balance column afterwards sees them. A crash before the write
 * loses them: those calls cost nothing, as with the holds themselves.
 */
export class ChargeQueue {
  private items: Charge[] = [];
  private readonly byAccount = new Map<string, number>();
  private scheduled = false;
  private writing = false;

  /**
   * `written(accountId, micros)`: the column was just lowered by `micros` (keep a cached copy
   * in step); `failed`: a batch that could not be written (its calls go uncharged).
   */
  constructor(
    private readonly sync: SyncSqlite,
    private readonly written: (accountId: string, micros: number) => void,
    private readonly failed: (err: unknown, charges: number) => void
  ) {
    sync.beforeStatements(() => this.flush());
  }

  pending(accountId: string): number {
    return this.byAccount.get(accountId) ?? 0;
  }

  add(c: Charge): void {
    this.items.push(c);
    this.byAccount.set(c.accountId, this.pending(c.accountId) + c.charged);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.flush();
      });
    }
  }

  /** Write what is pending, unless a transaction holds the connection (then its end will). */
  flush(): void {
    if (this.writing || this.items.length === 0) return;
    if (!this.sync.free()) {
      if (!this.scheduled) {
        this.scheduled = true;
        setTimeout(() => {
          this.scheduled = false;
          this.flush();
        }, 1);
      }
      return;
    }
    const items = this.items;
    this.items = [];
    this.writing = true;
    let ok = false;
    try {
      syncChargeMany(this.sync, items);
      ok = true;
    } catch (e) {
      this.failed(e, items.length);
    } finally {
      this.writing = false;
      for (const c of items) {
        const left = this.pending(c.accountId) - c.charged;
        if (left > 0) this.byAccount.set(c.accountId, left);
        else this.byAccount.delete(c.accountId);
        if (ok && c.charged > 0) this.written(c.accountId, c.charged);
      }
    }
  }
}
