import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import type { WebSocket, WebSocketServer } from 'ws';
import { isApiError, type UpgradeHandler } from '../../core/kit/area.js';
import { isChannelName, type ChannelType } from './channel-names.js';
import { limitsOf } from './config.js';
import { Hub, type Envelope, type Frames, type Subscriber } from './hub.js';
import type { Member } from './presence.js';
import type { PusherAppRow } from './pusher-apps.js';
import { admitMessage, type RealtimeDeps } from './routes.js';
import { BoundedSocket } from './socket-io.js';

// Pusher Channels protocol 7 (wire-facts.md): `data` of server frames is a JSON string.

/** `/app/{key}?protocol=7`: the app is found by key after the upgrade, as Pusher reports errors in frames. */
export function pusherUpgrade(d: RealtimeDeps, wss: WebSocketServer): UpgradeHandler {
  return (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://gateway');
    const key = decodeURIComponent(url.pathname.slice('/app/'.length));
    const protocol = Number(url.searchParams.get('protocol') ?? '7');
    d.apps.byKey(key).then(
      async (app) => {
        const room = !app?.active || (await d.hub.reserve(app.accountId, limitsOf(d.cfg, app.tier).connections));
        wss.handleUpgrade(req, socket, head, (ws) => PusherSocket.start(d, ws, app, key, protocol, room));
      },
      (e) => {
        d.svc.log.warn({ err: e }, 'realtime: Pusher app lookup failed');
        socket.destroy();
      }
    );
  };
}

function frame(event: string, data: unknown, channel?: string): string {
  return JSON.stringify(channel === undefined ? { event, data } : { event, channel, data });
}

/** The hex HMAC-SHA256 the channel authorization carries, as the `pusher` SDK makes it. */
export function pusherSign(secret: string, text: string): string {
  return createHmac('sha256', secret).update(text).digest('hex');
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

interface Joined {
  type: ChannelType;
  /** Presence: connections a user has on the channel, as this socket knows (Pusher counts users, not sockets). */
  users?: Map<string, number>;
  member?: Member;
}

interface ClientFrame {
  event?: unknown;
  channel?: unknown;
  data?: any;
}

class PusherSocket implements Subscriber {
  readonly id = `${randomInt(1, 2 ** 31)}.${randomInt(1, 2 ** 31)}`;
  readonly accountId: string;
  private readonly out: BoundedSocket;
  private readonly joined = new Map<string, Joined>();

  /** `room`: reserve() found the account under its socket limit (across nodes with Redis). */
  static start(
    d: RealtimeDeps,
    ws: WebSocket,
    app: PusherAppRow | null,
    key: string,
    protocol: number,
    room: boolean
  ): void {
    const refuse = (code: number, message: string) => {
      ws.send(frame('pusher:error', { code, message }));
      ws.close(code, message);
    };
    if (!app?.active) return refuse(4001, `App key ${key} does not exist on this gateway.`);
    if (!(protocol >= 5 && protocol <= 7)) return refuse(4007, `Unsupported protocol version ${protocol}.`);
    const s = new PusherSocket(d, ws, app);
    if (!room || !d.hub.admit(s, limitsOf(d.cfg, app.tier).connections)) {
      s.out.ended = true;
      return refuse(4004, 'The app is over its connection quota.');
    }
    s.listen(ws);
  }

  private constructor(
    private readonly d: RealtimeDeps,
    ws: WebSocket,
    private readonly app: PusherAppRow
  ) {
    this.accountId = app.accountId;
    this.out = new BoundedSocket(ws, d.bounds('pusher'));
  }

  private listen(ws: WebSocket): void {
    ws.on('close', () => void this.closed());
    ws.on('error', () => ws.terminate());
    ws.on('message', (raw) => {
      let f: ClientFrame;
      try {
        f = JSON.parse(raw.toString());
      } catch {
        return this.error(null, 'Frames are JSON objects.');
      }
      if (!f || typeof f !== 'object' || typeof f.event !== 'string')
        return this.error(null, 'A frame names its event.');
      this.handle(f as ClientFrame & { event: string }).catch((e) => {
        if (!isApiError(e)) this.d.svc.log.warn({ err: e }, 'realtime: a Pusher frame failed');
        this.error(
          isApiError(e) && e.code === 'rate_limited' ? 4301 : null,
          isApiError(e) ? e.message : 'Internal error.'
        );
      });
    });
    const established = { socket_id: this.id, activity_timeout: this.d.cfg.activity_timeout_seconds };
    this.out.send(frame('pusher:connection_established', JSON.stringify(established)));
  }

  private error(code: number | null, message: string): void {
    this.out.send(frame('pusher:error', { code, message }));
  }

  end(code: number, reason: string): void {
    this.out.end(code, reason);
  }

  /** 4201: Pusher's "pong not received", after which pusher-js reconnects at once. */
  checkAlive(): void {
    this.out.checkAlive(4201);
  }

  private async handle(f: ClientFrame & { event: string }): Promise<void> {
    if (f.event === 'pusher:ping') return this.out.send(frame('pusher:pong', '{}'));
    if (f.event === 'pusher:subscribe') return this.subscribe(f.data ?? {});
    if (f.event === 'pusher:unsubscribe') return this.drop(String(f.data?.channel ?? ''));
    if (f.event.startsWith('client-')) return this.clientEvent(f);
  }

  private subscriptionError(channel: string, status: number, message: string): void {
    const type = status === 401 || status === 403 ? 'AuthError' : 'LimitReached';
    this.out.send(frame('pusher:subscription_error', { type, error: message, status }, channel));
  }

  private async subscribe(data: { channel?: unknown; auth?: unknown; channel_data?: unknown }): Promise<void> {
    const channel = data.channel;
    if (!isChannelName(channel)) return this.error(null, 'Invalid channel name.');
    if (this.joined.has(channel)) return;
    const cap = limitsOf(this.d.cfg, this.app.tier).channels_per_connection;
    if (this.joined.size >= cap) return this.subscriptionError(channel, 429, `At most ${cap} channels a connection.`);
    const type = await this.d.channels.typeOf(this.accountId, channel);
    const channelData = typeof data.channel_data === 'string' ? data.channel_data : undefined;
    if (type !== 'public') {
      const signed = `${this.id}:${channel}${type === 'presence' && channelData !== undefined ? `:${channelData}` : ''}`;
      const want = `${this.app.key}:${pusherSign(this.app.secret, signed)}`;
      if (typeof data.auth !== 'string' || !sameText(data.auth, want))
        return this.subscriptionError(
          channel,
          401,
          `Invalid signature for ${channel}: expected HMAC SHA256 of "${signed}".`
        );
    }
    const entry: Joined = { type };
    if (type === 'presence') {
      let parsed: { user_id?: unknown; user_info?: unknown } | undefined;
      try {
        parsed = channelData === undefined ? undefined : JSON.parse(channelData);
      } catch {
        parsed = undefined;
      }
      const userId = parsed?.user_id;
      if (typeof userId !== 'string' && typeof userId !== 'number')
        return this.subscriptionError(channel, 403, 'Presence channels need channel_data with a user_id.');
      entry.member = { client_id: this.id, user_id: String(userId), user_info: parsed?.user_info };
    }
    this.joined.set(channel, entry);
    await this.d.hub.subscribe(this, channel);
    if (!entry.member) return this.out.send(frame('pusher_internal:subscription_succeeded', '{}', channel));
    await this.d.hub.join(this.accountId, channel, entry.member);
    const members = await this.d.hub.presence.members(this.accountId, channel);
    entry.users = new Map();
    const hash: Record<string, unknown> = {};
    for (const m of members) {
      if (!m.user_id) continue;
      entry.users.set(m.user_id, (entry.users.get(m.user_id) ?? 0) + 1);
      hash[m.user_id] = m.user_info ?? null;
    }
    const ids = Object.keys(hash);
    const presence = { presence: { ids, hash, count: ids.length } };
    this.out.send(frame('pusher_internal:subscription_succeeded', JSON.stringify(presence), channel));
  }

  private async drop(channel: string): Promise<void> {
    const entry = this.joined.get(channel);
    if (!entry) return;
    this.joined.delete(channel);
    await this.d.hub.unsubscribe(this, channel);
    if (entry.member && !this.d.hub.closing) await this.d.hub.leave(this.accountId, channel, entry.member);
  }

  /** `client-*` on a private or presence channel this socket holds; not echoed to it. */
  private async clientEvent(f: ClientFrame & { event: string }): Promise<void> {
    const channel = typeof f.channel === 'string' ? f.channel : '';
    const entry = this.joined.get(channel);
    if (!entry) return this.error(null, `Client event on ${channel}, which this connection is not subscribed to.`);
    if (entry.type === 'public') return this.error(null, 'Client events are only for private and presence channels.');
    await admitMessage(this.d, this.accountId, this.app.tier, f.data);
    const env = Hub.message(f.event, f.data ?? null, this.id);
    // Pusher names the sender of a client event on a presence channel.
    if (entry.member?.user_id) env.u = entry.member.user_id;
    await this.d.hub.send(this.accountId, channel, env);
  }

  deliver(channel: string, env: Envelope, frames: Frames): void {
    const entry = this.joined.get(channel);
    if (!entry) return;
    if (env.t === 'm') {
      const data = typeof env.d === 'string' ? env.d : JSON.stringify(env.d);
      const f = env.u ? JSON.stringify({ event: env.e, channel, data, user_id: env.u }) : frame(env.e, data, channel);
      return this.out.send((frames.pusher ??= f));
    }
    if (env.t === 'x') {
      this.joined.delete(channel);
      void this.d.hub.unsubscribe(this, channel);
      return;
    }
    if (!entry.users || !env.m.user_id || env.m.client_id === this.id) return;
    const user = env.m.user_id;
    const n = entry.users.get(user) ?? 0;
    if (env.t === 'j') {
      entry.users.set(user, n + 1);
      if (n === 0)
        this.out.send(
          frame('pusher_internal:member_added', JSON.stringify({ user_id: user, user_info: env.m.user_info }), channel)
        );
    } else if (n > 0) {
      if (n > 1) entry.users.set(user, n - 1);
      else {
        entry.users.delete(user);
        this.out.send(frame('pusher_internal:member_removed', JSON.stringify({ user_id: user }), channel));
      }
    }
  }

  private async closed(): Promise<void> {
    this.out.ended = true;
    this.d.hub.release(this);
    for (const channel of [...this.joined.keys()])
      await this.drop(channel).catch((e) => this.d.svc.log.warn({ err: e }, 'realtime: leaving a channel failed'));
  }
}
