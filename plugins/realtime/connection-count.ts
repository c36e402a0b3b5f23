import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

// Admission in one step on Redis, so two nodes never both take an account's last socket:
// sum the account's count on every node that beat within the TTL, refuse at the limit, else
// count one more on this node. KEYS: the nodes' heartbeat set, this node's hash.
// ARGV: node id, account id, limit, now (ms), TTL (ms), the prefix of the nodes' hashes.
const ADMIT = `
local live = redis.call('ZRANGEBYSCORE', KEYS[1], tonumber(ARGV[4]) - tonumber(ARGV[5]), '+inf')
local n = 0
for _, node in ipairs(live) do
  if node ~= ARGV[1] then n = n + tonumber(redis.call('HGET', ARGV[6] .. node, ARGV[2]) or '0') end
end
n = n + tonumber(redis.call('HGET', KEYS[2], ARGV[2]) or '0')
if n >= tonumber(ARGV[3]) then return 0 end
redis.call('HINCRBY', KEYS[2], ARGV[2], 1)
redis.call('PEXPIRE', KEYS[2], ARGV[5])
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[1])
return 1
`;

/**
 * An account's open sockets across nodes (redis_url set): each node keeps its counts in its
 * own Redis hash, rewritten from its memory at every heartbeat and expiring with it, so the
 * sockets of a node that died stop counting after `ttlMs`; nodes are found through a sorted
 * set of their last heartbeats.
 */
export class SharedConnections {
  private readonly nodes: string;
  private readonly mine: string;

  constructor(
    private readonly redis: Redis,
    private readonly nodeId: string,
    private readonly ttlMs: number,
    private readonly log: Logger,
    private readonly prefix = 'svc:realtime:connections:'
  ) {
    this.nodes = `${prefix}nodes`;
    this.mine = `${prefix}node:${nodeId}`;
  }

  /** One more socket for the account, unless its sockets on all nodes are at `limit`. */
  async admit(accountId: string, limit: number): Promise<boolean> {
    const args = [this.nodeId, accountId, limit, Date.now(), this.ttlMs, `${this.prefix}node:`];
    return (await this.redis.eval(ADMIT, 2, this.nodes, this.mine, ...args)) === 1;
  }

  /** A socket admitted here closed. */
  release(accountId: string): void {
    this.redis.hincrby(this.mine, accountId, -1).catch((e) => this.log.warn({ err: e }, 'realtime: count release'));
  }

  /** This node's counts as it knows them (so drift heals), with a fresh TTL; dead nodes pruned. */
  async heartbeat(counts: Map<string, number>): Promise<void> {
    const now = Date.now();
    const m = this.redis.multi().del(this.mine);
    if (counts.size) m.hset(this.mine, Object.fromEntries(counts)).pexpire(this.mine, this.ttlMs);
    await m
      .zadd(this.nodes, now, this.nodeId)
      .zremrangebyscore(this.nodes, '-inf', now - this.ttlMs)
      .exec();
  }

  /** This node stops: its sockets no longer count anywhere. */
  async close(): Promise<void> {
    await this.redis
      .multi()
      .del(this.mine)
      .zrem(this.nodes, this.nodeId)
      .exec()
      .catch(() => undefined);
    this.redis.disconnect();
  }
}

/** The shared count when Redis is configured; one connection of its own (the bus's is not exposed to areas). */
export async function sharedConnections(
  url: string | undefined,
  nodeId: string,
  ttlMs: number,
  log: Logger
): Promise<SharedConnections | undefined> {
  if (!url) return undefined;
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2 });
  redis.on('error', (e: Error) => log.warn({ err: e.message }, 'realtime: redis connection error'));
  await redis.connect();
  return new SharedConnections(redis, nodeId, ttlMs, log);
}
