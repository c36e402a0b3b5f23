import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Bus, BusHandler } from './bus.js';

/**
 * Redis pub/sub for several nodes. One connection publishes, one subscribes (a subscribed
 * Redis connection can do nothing else). Topics are prefixed so several gateways can share
 * one Redis.
 */
export class RedisBus implements Bus {
  readonly kind = 'redis' as const;
  private readonly pub: Redis;
  private readonly sub: Redis;
  private readonly handlers = new Map<string, Set<BusHandler>>();

  constructor(
    url: string,
    private readonly log: Logger,
    private readonly prefix = 'svc:'
  ) {
    this.pub = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2 });
    this.sub = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2 });
    this.sub.on('message', (channel: string, raw: string) => {
      const set = this.handlers.get(channel.slice(this.prefix.length));
      if (!set) return;
      let msg: unknown;
      try {
        msg = JSON.parse(raw);
      } catch {
        this.log.warn({ channel }, 'bus: dropped a message that is not JSON');
        return;
      }
      for (const h of set) h(msg);
    });
    for (const c of [this.pub, this.sub])
      c.on('error', (e: Error) => this.log.warn({ err: e.message }, 'redis bus connection error'));
  }

  async connect(): Promise<void> {
    await Promise.all([this.pub.connect(), this.sub.connect()]);
  }

  async publish(topic: string, message: unknown): Promise<void> {
    await this.pub.publish(this.prefix + topic, JSON.stringify(message ?? null));
  }

  async subscribe(topic: string, handler: BusHandler) {
    let set = this.handlers.get(topic);
    if (!set) {
      set = new Set();
      this.handlers.set(topic, set);
      await this.sub.subscribe(this.prefix + topic);
    }
    set.add(handler);
    return async () => {
      set!.delete(handler);
      if (!set!.size) {
        this.handlers.delete(topic);
        await this.sub.unsubscribe(this.prefix + topic);
      }
    };
  }

  async close(): Promise<void> {
    this.handlers.clear();
    await Promise.allSettled([this.sub.quit(), this.pub.quit()]);
  }

  /** The publishing connection, for other shared state (rate-limit buckets). */
  get client(): Redis {
    return this.pub;
  }
}
