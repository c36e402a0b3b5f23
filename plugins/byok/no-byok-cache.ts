/** How long "no active BYOK key" is believed without hearing otherwise. */
export const NO_BYOK_TTL_MS = 10_000;
const MAX_ACCOUNTS = 100_000;

/**
 * The accounts seen to have no active BYOK key, so that an AI call skips the lookup (one of
 * the few database statements every call makes, and most accounts have no key). Only the
 * absence is kept, never a credential. A change to an account's keys (BYOK_CHANGED on the
 * bus, from any node) drops it; an entry expires after NO_BYOK_TTL_MS regardless, which
 * bounds the cost of an announcement lost on the way.
 */
export class NoByokCache {
  private readonly seen = new Map<string, number>();
  /** Bumped by every change: a lookup that started before a change must not be cached. */
  epoch = 0;

  constructor(private readonly now: () => number = Date.now) {}

  has(accountId: string): boolean {
    const at = this.seen.get(accountId);
    if (at === undefined) return false;
    if (this.now() - at < NO_BYOK_TTL_MS) return true;
    this.seen.delete(accountId);
    return false;
  }

  /** Record an empty lookup that began at `epoch`; ignored if a change came in meanwhile. */
  add(accountId: string, epoch: number): void {
    if (epoch !== this.epoch) return;
    if (this.seen.size >= MAX_ACCOUNTS) this.seen.clear();
    this.seen.set(accountId, this.now());
  }

  changed(accountId: string): void {
    this.epoch++;
    this.seen.delete(accountId);
  }
}
