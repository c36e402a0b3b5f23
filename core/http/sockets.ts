import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
export type RawRequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** A WebSocket (or other) upgrade endpoint an area serves on the gateway's own port. */
export interface UpgradeRoute {
  /** Path prefix, matched before the query string: `/v1/realtime/ws`, `/app/`. */
  prefix: string;
  handle: UpgradeHandler;
  /**
   * Ends this route's sockets when the gateway closes (close frames, then destroy). Called
   * before the HTTP server closes: Node's `server.close()` waits for every upgraded socket.
   */
  close?: () => Promise<void> | void;
}

/**
 * Requests for Hosts an area owns, taken before Fastify routes them (tunnels serve
 * `{sub}.{tunnel_domain}`). The API's own Host must never match: a claim that matched it would
 * hide the API.
 */
export interface HostClaim {
  name: string;
  matches(host: string): boolean;
  request: RawRequestHandler;
  upgrade: UpgradeHandler;
  close?: () => Promise<void> | void;
}

/**
 * What arrives on the gateway's port outside Fastify's router: upgrades (realtime, tunnels)
 * by path, and whole Hosts claimed by an area. Areas add theirs at register time through
 * `svc.sockets`; `app.inject()` bypasses it, so tests of these talk to a listening socket.
 */
export class Sockets {
  private readonly routes: UpgradeRoute[] = [];
  private readonly claims: HostClaim[] = [];
  private readonly open = new Set<Duplex>();

  onUpgrade(route: UpgradeRoute): void {
    if (this.routes.some((r) => r.prefix === route.prefix)) throw new Error(`upgrade path ${route.prefix} taken twice`);
    this.routes.push(route);
  }

  claimHosts(claim: HostClaim): void {
    this.claims.push(claim);
  }

  /** Fastify's `serverFactory`: its own HTTP/1 server, with the claims and upgrades in front. */
  readonly serverFactory = (handler: RawRequestHandler, opts: Record<string, any>): http.Server => {
    const server = http.createServer(opts.http ?? {}, (req, res) => {
      const claim = this.claimFor(req);
      if (claim) claim.request(req, res);
      else handler(req, res);
    });
    server.keepAliveTimeout = opts.keepAliveTimeout;
    server.requestTimeout = opts.requestTimeout;
    server.setTimeout(opts.connectionTimeout);
    server.on('upgrade', (req, socket, head) => this.upgrade(req, socket, head));
    return server;
  };

  private claimFor(req: IncomingMessage): HostClaim | undefined {
    if (this.claims.length === 0) return undefined;
    const host = hostName(req.headers.host);
    if (!host) return undefined;
    return this.claims.find((c) => c.matches(host));
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.open.add(socket);
    socket.once('close', () => this.open.delete(socket));
    socket.on('error', () => socket.destroy());
    const claim = this.claimFor(req);
    if (claim) return claim.upgrade(req, socket, head);
    const path = (req.url ?? '/').split('?')[0];
    const route = this.routes.find(
      (r) => path === r.prefix || path.startsWith(r.prefix.endsWith('/') ? r.prefix : `${r.prefix}/`)
    );
    if (route) return route.handle(req, socket, head);
    const body = JSON.stringify({
      error: { code: 'not_found', message: `No WebSocket endpoint at ${path}.` },
    });
    socket.end(
      `HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`
        + `Connection: close\r\n\r\n${body}`
    );
  }

  /** Before the HTTP server closes: each owner ends its sockets; whatever is left is destroyed. */
  async close(): Promise<void> {
    for (const owner of [...this.routes, ...this.claims]) await owner.close?.();
    for (const s of this.open) s.destroy();
    this.open.clear();
  }
}

/** `Host` without its port, lower-cased; IPv6 literals keep their brackets. */
export function hostName(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const h = header.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1) || undefined;
  const i = h.lastIndexOf(':');
  return (i >= 0 ? h.slice(0, i) : h) || undefined;
}
