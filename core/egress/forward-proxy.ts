import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { AddressVerdict } from './address-policy.js';

/** Hop-by-hop headers (RFC 9110 7.6.1) and the proxy's own: not forwarded. */
const HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** What the proxy asks of the egress guard (egress.ts's Egress). */
export interface Guard {
  /** The checked addresses of a host ([] when it does not resolve); throws the refusal. */
  addresses(host: string, param?: string): Promise<AddressVerdict[]>;
  readonly cfg: { timeout_ms: number };
}

/** What the proxy did with one connection a client asked for (tests and debug logs). */
export interface ProxyDecision {
  method: string;
  /** The URL (plain HTTP) or host:port (CONNECT) asked for. */
  target: string;
  allowed: boolean;
  /** Why it was refused: the egress guard's message, or a malformed request. */
  reason?: string;
}

/**
 * A forward proxy for clients the gateway runs but does not drive request by request (a
 * browser: a page's prefetches, beacons, keepalive fetches and WebRTC TURN over TCP leave
 * outside its request interception). Plain HTTP (absolute-form) and CONNECT tunnels; every
 * connection's host is resolved and every address checked by the egress guard, and the
 * connection goes to a checked address, so a name cannot rebind between check and connect.
 * Listens on 127.0.0.1 on a port of the system's choosing: only this machine reaches it.
 */
export class ForwardProxy {
  private readonly sockets = new Set<Duplex>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly onDecision?: (d: ProxyDecision) => void
  ) {}

  static async start(egress: Guard, onDecision?: (d: ProxyDecision) => void): Promise<ForwardProxy> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const proxy = new ForwardProxy(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`, onDecision);
    server.on('connection', (s: Socket) => proxy.track(s));
    server.on('request', (req, res) => void proxy.forward(egress, req, res));
    server.on('connect', (req, socket, head) => void proxy.tunnel(egress, req, socket, head));
    return proxy;
  }

  private track(s: Duplex): void {
    this.sockets.add(s);
    s.on('close', () => this.sockets.delete(s));
    s.on('error', () => s.destroy());
  }

  /** The checked addresses of `host`, or why not (the decision is reported either way). */
  private async judge(egress: Guard, method: string, target: string, host: string): Promise<AddressVerdict[]> {
    let reason: string | undefined;
    let found: AddressVerdict[] = [];
    try {
      found = await egress.addresses(host, 'proxy');
      if (!found.length) reason = `${host} does not resolve`;
    } catch (e) {
      reason = (e as Error).message;
    }
    this.onDecision?.({ method, target, allowed: !reason, ...(reason ? { reason } : {}) });
    if (reason) throw new Error(reason);
    return found;
  }

  /** A plain-HTTP request in absolute form, sent on to a checked address. */
  private async forward(egress: Guard, req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
      if (url.protocol !== 'http:') throw new Error('not http');
    } catch {
      this.onDecision?.({
        method: req.method ?? '',
        target: req.url ?? '',
        allowed: false,
        reason: 'not a proxy request',
      });
      return void res.writeHead(400).end();
    }
    let addresses: AddressVerdict[];
    try {
      addresses = await this.judge(egress, req.method ?? 'GET', url.href, url.hostname);
    } catch {
      return void res.writeHead(403, { 'content-type': 'text/plain' }).end('refused by the egress rules\n');
    }
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !HOP.has(k)));
    const up = httpRequest({
      host: addresses[0].address,
      family: addresses[0].family,
      port: url.port || 80,
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers,
      agent: false,
      timeout: egress.cfg.timeout_ms,
    });
    up.on('socket', (s) => this.track(s));
    up.on('timeout', () => up.destroy(new Error('timeout')));
    up.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
    up.on('response', (answer) => {
      const back = Object.fromEntries(Object.entries(answer.headers).filter(([k]) => !HOP.has(k)));
      res.writeHead(answer.statusCode ?? 502, back as Record<string, string | string[]>);
      answer.pipe(res);
    });
    req.pipe(up);
  }

  /** A CONNECT tunnel (https, wss, TURN over TCP) to a checked address. */
  private async tunnel(egress: Guard, req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    this.track(socket);
    let host: string;
    let port: number;
    try {
      const [, name, digits] = /^(\[[^\]]+\]|[^:/?#@\s]+):(\d{1,5})$/.exec(req.url ?? '') ?? [];
      // The URL parser spells the host as the guard expects (2130706433 is 127.0.0.1).
      host = new URL(`http://${name}`).hostname;
      port = Number(digits);
      if (!name || port < 1 || port > 65535) throw new Error('not host:port');
    } catch {
      this.onDecision?.({ method: 'CONNECT', target: req.url ?? '', allowed: false, reason: 'not host:port' });
      return void socket.end('HTTP/1.1 400 Bad Request\r\n\r\n');
    }
    let addresses: AddressVerdict[];
    try {
      addresses = await this.judge(egress, 'CONNECT', req.url!, host);
    } catch {
      return void socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
    }
    const up = connect({ host: addresses[0].address, port, family: addresses[0].family });
    this.track(up);
    up.setTimeout(egress.cfg.timeout_ms, () => up.destroy());
    up.once('error', () => socket.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'));
    up.once('connect', () => {
      up.setTimeout(0);
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) up.write(head);
      up.pipe(socket).on('error', () => up.destroy());
      socket.pipe(up);
      socket.once('close', () => up.destroy());
      up.once('close', () => socket.destroy());
    });
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    // Tunnels and keep-alive connections would hold close() open: ended here, in flight or idle.
    this.server.closeAllConnections();
    for (const s of this.sockets) s.destroy();
    await closed;
  }
}
