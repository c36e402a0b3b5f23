import type { Redis } from 'ioredis';
import type { TierConfig } from '../../config/schema.js';
import type { RateDecision } from './rate-limit.js';

// The same token bucket as the in-memory limiter, kept in Redis so every node spends from
// one bucket per key. Redis's own clock (TIME) is the clock, so node clocks may differ.
const SCRIPT = `
local burst = tonumber(ARGV[1])
local per_ms = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local b = redis.call('HMGET', KEYS[1], 't', 'at')
local tokens = tonumber(b[1])
local at = tonumber(b[2])
if tokens == nil then tokens = burst; at = now end
tokens = math.min(burst, tokens + (now - at) * per_ms)
local allowed = 0
if tokens >= 1 then tokens = tokens - 1; allowed = 1 end
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / per_ms) + 1000)
return {allowed, tostring(tokens)}
`;

export class RedisRateLimiter {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'svc:rl:'
  ) {}

  async take(id: string, tier: Pick<TierConfig, 'rate_per_minute' | 'burst'>): Promise<RateDecision> {
    const perMs = tier.rate_per_minute / 60_000;
    const [allowed, left] = (await this.redis.eval(SCRIPT, 1, this.prefix + id, tier.burst, perMs)) as [number, string];
    const tokens = Number(left);
    const policy = `${tier.rate_per_minute};w=60;burst=${tier.burst}`;
    if (allowed === 1) {
      return {
        allowed: true,
        limit: tier.burst,
        remaining: Math.floor(tokens),
        resetSeconds: Math.ceil((tier.burst - tokens) / perMs / 1000),
        retryAfterSeconds: 0,
        policy,
      };
    }
    const wait = Math.ceil((1 - tokens) / perMs / 1000);
    return {
      allowed: false,
      limit: tier.burst,
      remaining: 0,
      resetSeconds: wait,
      retryAfterSeconds: Math.max(1, wait),
      policy,
    };
  }
}
