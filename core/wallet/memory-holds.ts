/**
 * Holds of calls in flight kept in this process's memory instead of `wallet_holds` rows: on
 * SQLite one process owns the database file (owner-lock.ts), so what it holds is all that is
 * held, and a reserve is a synchronous check-and-add here, with no write transaction. The
 * account's balance in the database still includes these amounts; whoever reads or takes from
 * it subtracts `held(account)`. A crash forgets them: nothing was charged for them, which is
 * what the hold sweep does with the rows of a node that died.
 */
interface MemoryHold {
  accountId: string;
  amount: number;
  expiresAt: number;
}

export class MemoryHolds {
  private readonly byId = new Map<string, MemoryHold>();
  private readonly byAccount = new Map<string, number>();

  /** The sum of `accountId`'s holds in this process. */
  held(accountId: string): number {
    return this.byAccount.get(accountId) ?? 0;
  }

  /** How many of `accountId`'s calls hold money here (a walk over them all: for tests and tools). */
  count(accountId: string): number {
    let n = 0;
    for (const h of this.byId.values()) if (h.accountId === accountId) n++;
    return n;
  }

  has(holdId: string): boolean {
    return this.byId.has(holdId);
  }

  add(holdId: string, accountId: string, amount: number, expiresAt: number): void {
    this.byId.set(holdId, { accountId, amount, expiresAt });
    this.byAccount.set(accountId, this.held(accountId) + amount);
  }

  /** Remove a hold; false when it is not here (settled, released or expired already). */
  remove(holdId: string): boolean {
    const h = this.byId.get(holdId);
    if (!h) return false;
    this.byId.delete(holdId);
    const left = this.held(h.accountId) - h.amount;
    if (left > 0) this.byAccount.set(h.accountId, left);
    else this.byAccount.delete(h.accountId);
    return true;
  }

  /** Move a hold's expiry; false when it is gone. */
  extend(holdId: string, expiresAt: number): boolean {
    const h = this.byId.get(holdId);
    if (h) h.expiresAt = expiresAt;
    return h !== undefined;
  }

  /** Drop the holds past their expiry (their calls never settled): the money is held no more. */
  dropExpired(now: number): number {
    let n = 0;
    for (const [id, h] of this.byId) if (h.expiresAt < now && this.remove(id)) n++;
    return n;
  }
}
