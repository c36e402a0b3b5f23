/** A hold (wallet.ts's Hold, spelled out: wallet.ts imports this file). */
type Hold = { holdId: string; accountId: string; amount: number; capability: string };

export type SettleMeta = { vendor?: string; ref?: string; quantity?: number };

/** A settle decided during a request and written with its stored answer. */
export interface DeferredCharge {
  hold: Hold;
  /** What the settle charges (decided when the call answered, as the response says). */
  charged: number;
  meta: SettleMeta;
  /** Its hold was in memory when its transaction began (Wallet.settleDeferred). */
  inMemory?: boolean;
}

/**
 * The charges of a request that holds an idempotency claim, kept until its answer is stored:
 * the wallet then writes them in the transaction that stores the answer (Wallet.settleDeferred),
 * so a crash or a failure between the charge and the answer leaves neither, and the retry runs
 * and charges once; stored apart, the retry charged a second time for an answer never kept.
 * Until then each hold stays held. Once `take()`n (the answer's transaction, or the request's
 * end without one) settles are written at once again.
 */
export class DeferredCharges {
  private items: DeferredCharge[] = [];
  private closed = false;

  /** False once taken: the caller then settles as usual. */
  add(c: DeferredCharge): boolean {
    if (this.closed) return false;
    this.items.push(c);
    return true;
  }

  /** What the holds exceed the charges by, per account: added to a balance read before the write. */
  heldOver(accountId: string): number {
    let n = 0;
    for (const c of this.items) if (c.hold.accountId === accountId) n += c.hold.amount - c.charged;
    return n;
  }

  /** The charges to write, once; later settles are not deferred. */
  take(): DeferredCharge[] {
    this.closed = true;
    const items = this.items;
    this.items = [];
    return items;
  }
}
