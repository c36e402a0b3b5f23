/** How long a balance read on SQLite is reused, and how many are kept. */
const BALANCE_TTL_MS = 2_000;
const BALANCE_CACHE_MAX = 10_000;

/**
 * SQLite only (one node, and every write to `wallets` goes through the Wallet): balances read
 * on the connection are kept a moment. A read costs a read transaction (file locks on the WAL
 * index): a third of the CPU of GET /v1/account/balance. The wallet drops an account's entry
 * before and after every write it commits, but a settle, which keeps the balance it read
 * inside its own transaction; what another process might write (nothing of ours does: the CLI
 * goes through the HTTP API) shows within BALANCE_TTL_MS.
 */
export class BalanceCache {
  private readonly kept = new Map<string, { micros: number; until: number }>();

  get(accountId: string): number | undefined {
    const hit = this.kept.get(accountId);
    return hit && hit.until > Date.now() ? hit.micros : undefined;
  }

  set(accountId: string, micros: number): void {
    if (this.kept.size >= BALANCE_CACHE_MAX) this.kept.delete(this.kept.keys().next().value!);
    this.kept.set(accountId, { micros, until: Date.now() + BALANCE_TTL_MS });
  }

  /** A charge written behind the cache's back (charge-queue.ts): the kept balance follows it. */
  spent(accountId: string, micros: number): void {
    const hit = this.kept.get(accountId);
    if (hit) hit.micros -= micros;
  }

  forget(accountId: string): void {
    this.kept.delete(accountId);
  }
}
