import type { Logger } from 'pino';
import { newId, type Bus } from '../../core/kit/area.js';
import type { SharedConnections } from './connection-count.js';
import type { History } from './history.js';
import type { RealtimeMeter } from './meter.js';
import type { Member, Presence } from './presence.js';

/** What travels on the bus for one channel: a message, a member joining or leaving, a delete. */
export type Envelope =
  | { t: 'm'; id: string; e: string; d: unknown; at: number; x?: string; u?: string }
  | { t: 'j' | 'l'; m: Member }
  | { t: 'x' };

/** Frames made once per envelope and protocol, shared by every socket that gets it. */
export type Frames = Record<string, string>;

/** A socket subscribed to channels, native or Pusher. */
export interface Subscriber {
  /** Client id (native) or socket id (Pusher): a message it sent itself (`x`) skips it. */
  readonly id: string;
  readonly accountId: string;
  deliver(channel: string, env: Envelope, frames: Frames): void;
  /** Ends the socket (close frame, then destroy if the peer does not answer). */
  end(code: number, reason: string): void;
  /** Pings a socket that was silent; ends one that did not answer the last ping. */
  checkAlive(): void;
}

/**
 * The channels of this node: which local sockets listen to each, fed by one bus topic a channel,
 * so a publish on any node reaches every node's sockets in the bus's order. Publishes never
 * deliver locally first: local and remote sockets see one order.
 */
export class Hub {
  private readonly subs = new Map<string, Set<Subscriber>>();
  private readonly topics = new Map<string, Promise<() => Promise<void>>>();
  private readonly perAccount = new Map<string, number>();
  readonly sockets = new Set<Subscriber>();
  /** Set by close(): sockets ending then leave their presence to removeNode. */
  closing = false;
  /** With redis_url: the account's sockets on every node count against its tier's limit. */
  shared: SharedConnections | undefined;

  constructor(
    readonly nodeId: string,
    private readonly bus: Bus,
    private readonly log: Logger,
    readonly history: History,
    readonly presence: Presence,
    readonly meter: RealtimeMeter
  ) {}

  private static topic(accountId: string, channel: string): string {
    return `realtime.${accountId}.${channel}`;
  }

  /**
   * Before an upgrade: whether the account may open one more socket. With a shared count this
   * takes the slot on Redis (admit() then counts it here); if Redis fails, this node's count decides.
   */
  async reserve(accountId: string, limit: number): Promise<boolean> {
    if (this.connections(accountId) >= limit) return false;
    if (!this.shared) return true;
    return this.shared.admit(accountId, limit).catch((e) => {
      this.log.warn({ err: e }, 'realtime: shared connection count unavailable, counting this node only');
      return true;
    });
  }

  /** Counts the socket against its account; false when the account already has `limit` here. */
  admit(s: Subscriber, limit: number): boolean {
    const n = this.perAccount.get(s.accountId) ?? 0;
    if (n >= limit) return false;
    this.perAccount.set(s.accountId, n + 1);
    this.sockets.add(s);
    this.meter.opened(s.accountId);
    return true;
  }

  release(s: Subscriber): void {
    if (!this.sockets.delete(s)) return;
    const n = (this.perAccount.get(s.accountId) ?? 1) - 1;
    if (n > 0) this.perAccount.set(s.accountId, n);
    else this.perAccount.delete(s.accountId);
    this.shared?.release(s.accountId);
    this.meter.closed(s.accountId);
  }

  connections(accountId: string): number {
    return this.perAccount.get(accountId) ?? 0;
  }

  /** Live from when this resolves: the bus topic is subscribed. */
  async subscribe(s: Subscriber, channel: string): Promise<void> {
    const topic = Hub.topic(s.accountId, channel);
    let set = this.subs.get(topic);
    if (!set) {
      set = new Set();
      this.subs.set(topic, set);
    }
    set.add(s);
    let ready = this.topics.get(topic);
    if (!ready) {
      const accountId = s.accountId;
      ready = this.bus.subscribe(topic, (m) => this.dispatch(topic, accountId, channel, m as Envelope));
      this.topics.set(topic, ready);
      ready.catch(() => this.topics.delete(topic));
    }
    await ready;
  }

  async unsubscribe(s: Subscriber, channel: string): Promise<void> {
    const topic = Hub.topic(s.accountId, channel);
    const set = this.subs.get(topic);
    if (!set?.delete(s) || set.size > 0) return;
    this.subs.delete(topic);
    const ready = this.topics.get(topic);
    this.topics.delete(topic);
    const off = await ready?.catch(() => undefined);
    await off?.().catch((e) => this.log.warn({ err: e }, 'realtime: bus unsubscribe failed'));
  }

  private dispatch(topic: string, accountId: string, channel: string, env: Envelope): void {
    const set = this.subs.get(topic);
    if (!set) return;
    const frames: Frames = {};
    let delivered = 0;
    for (const s of set) {
      if (env.t === 'm' && env.x === s.id) continue;
      s.deliver(channel, env, frames);
      delivered++;
    }
    if (env.t === 'm') this.meter.messages(accountId, delivered);
  }

  /** A new message's envelope; `exclude` is the sending socket (client events skip it). */
  static message(event: string, data: unknown, exclude?: string): Extract<Envelope, { t: 'm' }> {
    const env: Extract<Envelope, { t: 'm' }> = { t: 'm', id: newId('msg'), e: event, d: data, at: Date.now() };
    if (exclude) env.x = exclude;
    return env;
  }

  async broadcast(accountId: string, channel: string, env: Envelope): Promise<void> {
    if (env.t === 'm') this.meter.messages(accountId, 1);
    await this.bus.publish(Hub.topic(accountId, channel), env);
  }

  /** Stores a message in the channel's history and sends it; for sockets' own publishes. */
  async send(accountId: string, channel: string, env: Extract<Envelope, { t: 'm' }>): Promise<void> {
    await this.history.add(this.history.db, accountId, channel, {
      message_id: env.id,
      event: env.e,
      data: env.d,
      created_at: env.at,
    });
    await this.broadcast(accountId, channel, env);
  }

  async join(accountId: string, channel: string, m: Member): Promise<void> {
    await this.presence.join(accountId, channel, m);
    await this.broadcast(accountId, channel, { t: 'j', m });
  }

  async leave(accountId: string, channel: string, m: Member): Promise<void> {
    if (await this.presence.leave(accountId, channel, m.client_id))
      await this.broadcast(accountId, channel, { t: 'l', m: { client_id: m.client_id, user_id: m.user_id } });
  }

  /** Every activity timeout: sockets whose peer vanished are ended. */
  checkSockets(): void {
    for (const s of this.sockets) s.checkAlive();
  }

  /** Heartbeat of this node's members, and the leaves of dead nodes' members. */
  async tick(): Promise<void> {
    await this.shared?.heartbeat(this.perAccount);
    await this.presence.heartbeat();
    for (const g of await this.presence.sweep()) await this.broadcast(g.accountId, g.channel, { t: 'l', m: g.member });
    await this.history.sweep();
  }

  /** Ends every socket, then this node's members leave at once and its topics close. */
  async close(): Promise<void> {
    this.closing = true;
    for (const s of [...this.sockets]) {
      s.end(4200, 'server restarting');
      this.release(s);
    }
    await this.shared?.close();
    for (const g of await this.presence.removeNode())
      await this.broadcast(g.accountId, g.channel, { t: 'l', m: g.member });
    const offs = await Promise.all([...this.topics.values()].map((p) => p.catch(() => undefined)));
    this.topics.clear();
    this.subs.clear();
    await Promise.all(offs.map((off) => off?.().catch(() => undefined)));
  }
}
