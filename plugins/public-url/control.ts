import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocketServer, type WebSocket } from 'ws';
import { apiError, requireWithin, type Svc } from '../../core/kit/area.js';
import type { PublicUrlConfigT, TierLimitsT } from './config.js';
import { ByteBucket } from './meter.js';
import { localNodeUrl } from './forward.js';
import { Mux } from './mux.js';
import { asRefusal, refuseSocket } from './refuse.js';
import { hashToken, type UrlRow, type UrlStore } from './store.js';

export const CONTROL_PATH = '/v1/public-url/tunnel';
const PING_MS = 20_000;
/** Close codes the tunnel client reads (docs/public-url.md). */
export const CLOSE = { replaced: 4000, expired: 4001, byte_cap: 4002, gateway_closing: 1001 } as const;

/** A connected tunnel client: its record, the streams over its socket, its bandwidth. */
export interface Tunnel {
  row: UrlRow;
  ws: WebSocket;
  mux: Mux;
  bucket: ByteBucket;
  carried: number;
  /** This node as the others reach it: they forward the tunnel's requests here. */
  nodeUrl: string;
}

/**
 * Tunnel clients' control connections (`GET /v1/public-url/tunnel/{url_id}`, upgraded): checks
 * the key or the anonymous token, the record's life and the tier's tunnel count, then keeps one
 * connection a record (a reconnect replaces the old one and keeps the URL) with its state.
 */
export class TunnelRegistry {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
  private readonly byUrl = new Map<string, Tunnel>();
  private readonly bySubdomain = new Map<string, Tunnel>();
  /** One bandwidth bucket an account, shared by its tunnels. */
  private readonly buckets = new Map<string, ByteBucket>();

  constructor(
    private readonly svc: Svc,
    private readonly cfg: PublicUrlConfigT,
    private readonly urls: UrlStore,
    private readonly log: Logger
  ) {}

  find(subdomain: string): Tunnel | undefined {
    return this.bySubdomain.get(subdomain);
  }

  findByUrl(urlId: string): Tunnel | undefined {
    return this.byUrl.get(urlId);
  }

  private limits(tier: string): TierLimitsT {
    const all = this.cfg.tier_limits;
    return (
      all[tier]
      ?? Object.values(all).sort((a, b) => a.max_tunnels - b.max_tunnels)[0] ?? {
        max_tunnels: 1,
        bytes_per_second: 1024 * 1024,
      }
    );
  }

  readonly upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    this.admit(req).then(
      (found) => {
        if (socket.destroyed) return;
        this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, socket, found.row, found.bucket));
      },
      (e) => {
        const r = asRefusal(e);
        if (r.code === 'internal_error') this.log.error({ err: e }, 'tunnel connect failed');
        refuseSocket(socket, r.code, r.message);
      }
    );
  };

  /** Who may connect this record, and with what bandwidth. */
  private async admit(req: IncomingMessage): Promise<{ row: UrlRow; bucket: ByteBucket }> {
    const path = (req.url ?? '').split('?')[0];
    const urlId = decodeURIComponent(path.slice(CONTROL_PATH.length + 1));
    const auth = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
    if (!auth) throw apiError('unauthenticated', 'Send the API key (or the anonymous token) as a Bearer token.');
    const row = await this.urls.byId(urlId);
    const gone = () => apiError('not_found', `No public URL ${urlId} for this key.`);
    if (!row) throw gone();
    let tier = this.svc.config.default_tier;
    if (auth.startsWith('tun_')) {
      if (!row.token_hash || hashToken(auth) !== row.token_hash) throw gone();
    } else {
      const p = await this.svc.keys.lookup(auth);
      if (!p) throw apiError('unauthenticated', 'The API key is unknown, revoked or expired.');
      if (p.status !== 'active') throw apiError('forbidden', 'This account is suspended.');
      requireWithin(p.scopes, ['public-url'], 'connect a tunnel');
      if (row.account_id !== p.accountId) throw gone();
      tier = p.tier;
    }
    if (Number(row.expires_at) <= Date.now()) throw apiError('invalid_state', `Public URL ${urlId} has expired.`);
    if (row.account_id === null) return { row, bucket: new ByteBucket(this.cfg.anonymous.bytes_per_second) };
    const limits = this.limits(tier);
    if ((await this.urls.connectedCount(row.account_id, row.url_id)) >= limits.max_tunnels)
      throw apiError('rate_limited', `The ${tier} tier connects at most ${limits.max_tunnels} tunnels at once.`);
    if (this.cfg.price_per_gib_usd > 0 && (await this.svc.wallet.balance(row.account_id)) <= 0)
      throw apiError('insufficient_balance', 'The balance is spent: top up to carry bytes through a tunnel.');
    let bucket = this.buckets.get(row.account_id);
    if (!bucket) this.buckets.set(row.account_id, (bucket = new ByteBucket(limits.bytes_per_second)));
    return { row, bucket };
  }

  private accept(ws: WebSocket, socket: Duplex, row: UrlRow, bucket: ByteBucket): void {
    const old = this.byUrl.get(row.url_id);
    if (old) {
      this.drop(old);
      old.ws.close(CLOSE.replaced, 'replaced by a new connection');
    }
    const tunnel: Tunnel = {
      row,
      ws,
      mux: new Mux(ws, this.cfg.window_bytes, undefined, socket),
      bucket,
      carried: 0,
      nodeUrl: this.cfg.node_url || localNodeUrl(socket),
    };
    this.byUrl.set(row.url_id, tunnel);
    this.bySubdomain.set(row.subdomain, tunnel);
    ws.send(
      JSON.stringify({
        type: 'hello',
        url: this.urls.urlOf(row.subdomain),
        url_id: row.url_id,
        window: this.cfg.window_bytes,
      })
    );
    void this.urls
      .setState(row.url_id, 'connected', tunnel.nodeUrl)
      .catch((e) => this.log.warn({ err: e }, 'tunnel state'));
    let alive = true;
    ws.on('pong', () => (alive = true));
    const ping = setInterval(() => {
      if (!alive) return ws.terminate();
      alive = false;
      ws.ping();
    }, PING_MS);
    const life = Math.min(Number(row.expires_at) - Date.now(), 2 ** 31 - 1);
    const expiry = setTimeout(() => ws.close(CLOSE.expired, 'the public URL expired'), Math.max(0, life));
    ws.on('close', () => {
      clearInterval(ping);
      clearTimeout(expiry);
      if (this.byUrl.get(row.url_id) !== tunnel) return;
      this.drop(tunnel);
      const state = Number(row.expires_at) <= Date.now() ? 'expired' : 'disconnected';
      void this.urls
        .setState(row.url_id, state, tunnel.nodeUrl)
        .catch((e) => this.log.warn({ err: e }, 'tunnel state'));
    });
  }

  private drop(t: Tunnel): void {
    this.byUrl.delete(t.row.url_id);
    if (this.bySubdomain.get(t.row.subdomain) === t) this.bySubdomain.delete(t.row.subdomain);
  }

  /** A record moved to an account (claim): its live tunnel follows. */
  claimed(urlId: string, accountId: string): void {
    const t = this.byUrl.get(urlId);
    if (t) t.row = { ...t.row, account_id: accountId };
  }

  async close(): Promise<void> {
    const open = [...this.byUrl.values()];
    for (const t of open) t.ws.close(CLOSE.gateway_closing, 'gateway closing');
    this.byUrl.clear();
    this.bySubdomain.clear();
    for (const t of open) t.ws.terminate();
    await Promise.all(
      open.map((t) => this.urls.setState(t.row.url_id, 'disconnected', t.nodeUrl).catch(() => undefined))
    );
    this.wss.close();
  }
}
