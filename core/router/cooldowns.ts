import type { FailureKind } from './failure.js';

const BASE_MS: Partial<Record<FailureKind, number>> = {
  rate_limited: 5_000,
  unavailable: 2_000,
  timeout: 2_000,
  not_sent: 2_000,
  quota: 60_000,
  auth: 60_000,
};
const MAX_MS = 5 * 60_000;
// A vendor may ask for a long pause, but not pin itself last for more than an hour.
const MAX_RETRY_AFTER_MS = 60 * 60_000;

/**
 * A vendor that just failed is tried last for a while, longer each time it fails in a row
 * (capped), or for exactly as long as its retry-after said. One success clears it.
 */
export class Cooldowns {
  private readonly until = new Map<string, number>();
  private readonly streak = new Map<string, number>();

  cooling(id: string, now = Date.now()): boolean {
    return (this.until.get(id) ?? 0) > now;
  }

  failure(id: string, kind: FailureKind, retryAfterMs?: number): void {
    const base = BASE_MS[kind];
    if (base === undefined) return; // client errors say nothing about the vendor's health
    const n = (this.streak.get(id) ?? 0) + 1;
    this.streak.set(id, n);
    const ms =
      retryAfterMs !== undefined ? Math.min(MAX_RETRY_AFTER_MS, retryAfterMs) : Math.min(MAX_MS, base * 2 ** (n - 1));
    this.until.set(id, Date.now() + ms);
  }

  success(id: string): void {
    this.until.delete(id);
    this.streak.delete(id);
  }

  snapshot(): Record<string, { until: number; streak: number }> {
    const out: Record<string, { until: number; streak: number }> = {};
    for (const [id, until] of this.until) out[id] = { until, streak: this.streak.get(id) ?? 0 };
    return out;
  }
}
