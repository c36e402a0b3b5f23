import type WebSocket from 'ws';
import { iso, isApiError, type UpgradeHandler } from '../../core/kit/area.js';
import type { WebSocketServer } from 'ws';
import { isChannelName, type ChannelType } from './channel-names.js';
import { mayUse, verifyClientToken, type ClientClaims } from './client-token.js';
import { limitsOf } from './config.js';
import { Hub, type Envelope, type Frames, type Subscriber } from './hub.js';
import { admitMessage, type RealtimeDeps } from './routes.js';
import { BoundedSocket, refuseUpgrade } from './socket-io.js';

/** `/v1/realtime/ws?token=…`: the token is checked before the upgrade (401), the tier's sockets counted (429). */
export function nativeUpgrade(d: RealtimeDeps, wss: WebSocketServer): UpgradeHandler {
  return (req, socket, head) => {
    const token = new URL(req.url ?? '/', 'http://gateway').searchParams.get('token');
    if (!token) return refuseUpgrade(socket, 401, 'unauthenticated', 'No token: connect with ?token=<client token>.');
    let claims: ClientClaims;
    try {
      claims = verifyClientToken(d.svc, token);
    } catch (e) {
      return refuseUpgrade(socket, 401, 'unauthenticated', isApiError(e) ? e.message : 'The token is not valid.');
    }
    const limit = limitsOf(d.cfg, claims.tr).connections;
    void d.hub.reserve(claims.a, limit).then((ok) => {
      if (!ok)
        return refuseUpgrade(socket, 429, 'rate_limited', `The ${claims.tr} tier opens at most ${limit} sockets.`);
      wss.handleUpgrade(req, socket, head, (ws) => new NativeSocket(d, ws, claims));
    });
  };
}

interface Joined {
  type: ChannelType;
  /** Live messages held while a resume replays the history. */
  held?: Envelope[];
}

type Frame = { type?: unknown; id?: unknown; channel?: unknown; event?: unknown; data?: unknown; since?: unknown };

/** One client on the native protocol (docs/realtime.md): JSON text frames, `type` says what. */
class NativeSocket implements Subscriber {
  readonly id: string;
  readonly accountId: string;
  private readonly out: BoundedSocket;
  private readonly joined = new Map<string, Joined>();
  private readonly expiry: NodeJS.Timeout;

  constructor(
    private readonly d: RealtimeDeps,
    ws: WebSocket,
    private readonly claims: ClientClaims
  ) {
    this.id = claims.c;
    this.accountId = claims.a;
    this.out = new BoundedSocket(ws, d.bounds('native'));
    this.expiry = setTimeout(() => this.end(4401, 'token expired'), Math.max(0, claims.exp - Date.now()));
    this.expiry.unref();
    ws.on('close', () => void this.closed());
    ws.on('error', () => ws.terminate());
    if (!d.hub.admit(this, limitsOf(d.cfg, claims.tr).connections)) {
      this.end(4429, 'too many sockets');
      return;
    }
    ws.on('message', (raw, binary) => {
      if (binary) return this.error(undefined, 'invalid_request', 'Frames are JSON text.');
      let f: Frame;
      try {
        f = JSON.parse(raw.toString());
      } catch {
        return this.error(undefined, 'invalid_request', 'A frame is one JSON object.');
      }
      if (!f || typeof f !== 'object') return this.error(undefined, 'invalid_request', 'A frame is one JSON object.');
      this.handle(f).catch((e) => {
        if (isApiError(e)) this.error(f.id, e.code, e.message, f.channel);
        else {
          d.svc.log.warn({ err: e }, 'realtime: a frame failed');
          this.error(f.id, 'internal_error', 'The frame could not be handled.', f.channel);
        }
      });
    });
    this.send({ type: 'welcome', client_id: this.id, user_id: claims.u ?? null, expires_at: iso(claims.exp) });
  }

  private send(frame: Record<string, unknown>): void {
    this.out.send(JSON.stringify(frame));
  }

  private error(id: unknown, code: string, message: string, channel?: unknown): void {
    this.send({ type: 'error', id: id ?? null, code, message, ...(typeof channel === 'string' ? { channel } : {}) });
  }

  end(code: number, reason: string): void {
    this.out.end(code, reason);
  }

  checkAlive(): void {
    this.out.checkAlive(4408);
  }

  private async handle(f: Frame): Promise<void> {
    switch (f.type) {
      case 'ping':
        return this.send({ type: 'pong', id: f.id ?? null });
      case 'subscribe':
        return this.subscribe(f);
      case 'unsubscribe':
        return this.unsubscribe(f);
      case 'publish':
        return this.publish(f);
      default:
        return this.error(f.id, 'invalid_request', 'type is one of subscribe, unsubscribe, publish, ping.');
    }
  }

  private channelOf(f: Frame): string | undefined {
    if (isChannelName(f.channel)) return f.channel;
    this.error(f.id, 'validation_failed', "channel is not a channel name (letters, digits, '_-=@,.;', 164 at most).");
    return undefined;
  }

  private async subscribe(f: Frame): Promise<void> {
    const channel = this.channelOf(f);
    if (!channel) return;
    if (this.joined.has(channel)) return this.send({ type: 'subscribed', id: f.id ?? null, channel });
    const cap = limitsOf(this.d.cfg, this.claims.tr).channels_per_connection;
    if (this.joined.size >= cap)
      return this.error(f.id, 'payload_too_large', `A socket holds at most ${cap} channels on this tier.`, channel);
    const type = await this.d.channels.typeOf(this.accountId, channel);
    if (!mayUse(this.claims, channel, type))
      return this.error(f.id, 'forbidden', `This token does not grant the ${type} channel ${channel}.`, channel);
    const since = typeof f.since === 'string' && f.since ? f.since : undefined;
    const entry: Joined = { type, held: since ? [] : undefined };
    this.joined.set(channel, entry);
    await this.d.hub.subscribe(this, channel);
    let members;
    if (type === 'presence') {
      await this.d.hub.join(this.accountId, channel, this.member());
      members = (await this.d.hub.presence.members(this.accountId, channel)).map(wireMember);
    }
    if (!since) return this.send({ type: 'subscribed', id: f.id ?? null, channel, ...(members ? { members } : {}) });
    const { messages, complete } = await this.d.hub.history.after(this.accountId, channel, since);
    this.send({ type: 'subscribed', id: f.id ?? null, channel, resumed: complete, ...(members ? { members } : {}) });
    const seen = new Set<string>();
    for (const m of messages) {
      seen.add(m.message_id);
      this.send(messageFrame(channel, { t: 'm', id: m.message_id, e: m.event, d: m.data, at: m.created_at }));
    }
    const held = entry.held ?? [];
    entry.held = undefined;
    for (const env of held) if (env.t !== 'm' || !seen.has(env.id)) this.deliverNow(channel, env, {});
  }

  private member() {
    return this.claims.u ? { client_id: this.id, user_id: this.claims.u } : { client_id: this.id };
  }

  private async unsubscribe(f: Frame): Promise<void> {
    const channel = this.channelOf(f);
    if (!channel) return;
    await this.drop(channel);
    this.send({ type: 'unsubscribed', id: f.id ?? null, channel });
  }

  private async drop(channel: string): Promise<void> {
    const entry = this.joined.get(channel);
    if (!entry) return;
    this.joined.delete(channel);
    await this.d.hub.unsubscribe(this, channel);
    if (entry.type === 'presence' && !this.d.hub.closing)
      await this.d.hub.leave(this.accountId, channel, this.member());
  }

  private async publish(f: Frame): Promise<void> {
    const channel = this.channelOf(f);
    if (!channel) return;
    if (!this.claims.p) return this.error(f.id, 'forbidden', 'This token may not publish.', channel);
    if (typeof f.event !== 'string' || !f.event || f.event.length > 200 || /^pusher[:_]/.test(f.event))
      return this.error(f.id, 'validation_failed', 'event is a name of 1 to 200 characters, not pusher:… or pusher_….');
    const type = await this.d.channels.typeOf(this.accountId, channel);
    if (!mayUse(this.claims, channel, type))
      return this.error(f.id, 'forbidden', `This token does not grant the ${type} channel ${channel}.`, channel);
    await admitMessage(this.d, this.accountId, this.claims.tr, f.data);
    const env = Hub.message(f.event, f.data ?? null, this.id);
    await this.d.hub.send(this.accountId, channel, env);
    this.send({ type: 'published', id: f.id ?? null, channel, message_id: env.id });
  }

  deliver(channel: string, env: Envelope, frames: Frames): void {
    const entry = this.joined.get(channel);
    if (!entry) return;
    if (entry.held) entry.held.push(env);
    else this.deliverNow(channel, env, frames);
  }

  private deliverNow(channel: string, env: Envelope, frames: Frames): void {
    if (env.t === 'm') {
      this.out.send((frames.native ??= JSON.stringify(messageFrame(channel, env))));
    } else if (env.t === 'x') {
      this.joined.delete(channel);
      void this.d.hub.unsubscribe(this, channel);
      this.send({ type: 'unsubscribed', channel, reason: 'the channel was deleted' });
    } else if (env.m.client_id !== this.id) {
      const type = env.t === 'j' ? 'member_added' : 'member_removed';
      this.out.send((frames[type] ??= JSON.stringify({ type, channel, member: wireMember(env.m) })));
    }
  }

  private async closed(): Promise<void> {
    clearTimeout(this.expiry);
    this.out.ended = true;
    this.d.hub.release(this);
    for (const channel of [...this.joined.keys()])
      await this.drop(channel).catch((e) => this.d.svc.log.warn({ err: e }, 'realtime: leaving a channel failed'));
  }
}

function messageFrame(channel: string, env: Extract<Envelope, { t: 'm' }>) {
  return { type: 'message', channel, event: env.e, data: env.d, message_id: env.id, published_at: iso(env.at) };
}

function wireMember(m: { client_id: string; user_id?: string }) {
  return m.user_id ? { client_id: m.client_id, user_id: m.user_id } : { client_id: m.client_id };
}
