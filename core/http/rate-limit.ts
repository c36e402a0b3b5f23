import type { TierConfig } from '../../config/schema.js';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again (allowed) or until one request is allowed (refused). */
  resetSeconds: number;
  retryAfterSeconds: number;
  policy: string;
}

// The tiers are config objects that live as long as the process: their header text is made once.
const policies = new WeakMap<object, string>();
function policyOf(tier: Pick<TierConfig, 'rate_per_minute' | 'burst'>): string {
  let p = policies.get(tier);
  if (p === undefined) policies.set(tier, (p = `${tier.rate_per_minute};w=60;burst=${tier.burst}`));
  return p;
}

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Token buckets per key: `burst` requests at once, refilled at `rate_per_minute`. The tier is
 * read on every request, so an upgrade applies at once. In memory, per node: a cluster of
 * N nodes behind a balancer allows up to N× the rate per key (see docs/self-hosting.md).
 */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly max = 100_000;

  take(id: string, tier: Pick<TierConfig, 'rate_per_minute' | 'burst'>, now = Date.now()): RateDecision {
    const perMs = tier.rate_per_minute / 60_000;
    let b = this.buckets.get(id);
    if (!b) {
      if (this.buckets.size >= this.max) this.evict(now, perMs);
      b = { tokens: tier.burst, at: now };
      this.buckets.set(id, b);
    }
    b.tokens = Math.min(tier.burst, b.tokens + (now - b.at) * perMs);
    b.at = now;
    const policy = policyOf(tier);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return {
        allowed: true,
        limit: tier.burst,
        remaining: Math.floor(b.tokens),
        resetSeconds: Math.ceil((tier.burst - b.tokens) / perMs / 1000),
        retryAfterSeconds: 0,
        policy,
      };
    }
    const wait = Math.ceil((1 - b.tokens) / perMs / 1000);
    return {
      allowed: false,
      limit: tier.burst,
      remaining: 0,
      resetSeconds: wait,
      retryAfterSeconds: Math.max(1, wait),
      policy,
    };
  }

  private evict(now: number, perMs: number) {
    // Drop buckets that have refilled completely: forgetting them changes nothing.
    for (const [k, v] of this.buckets) if ((now - v.at) * perMs > 1000) this.buckets.delete(k);
    if (this.buckets.size >= this.max) this.buckets.clear();
  }
}
