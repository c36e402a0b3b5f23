import type { IncomingMessage, ServerResponse } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { pipeline } from 'node:stream';
import type { PublicUrlConfigT } from './config.js';
import type { TunnelRegistry, Tunnel } from './control.js';
import type { DomainStore } from './domains.js';
import { type NodeForwarder, withoutHop } from './forward.js';
import { endToEnd, forwardedHeaders, headerObject } from './headers.js';
import { Metered, type TunnelMeter } from './meter.js';
import type { HeadMeta, MuxStream } from './mux.js';
import { refuseResponse, refuseSocket } from './refuse.js';
import { SUBDOMAIN_PATTERN } from './schemas.js';
import type { UrlStore } from './store.js';

const LABEL = new RegExp(SUBDOMAIN_PATTERN);

/**
 * The public side of tunnels: requests whose Host is {subdomain}.{tunnel_domain} (or a verified
 * custom domain) go to that subdomain's tunnel and no other. The API's own Host, loopback
 * addresses and the bare tunnel domain never match, so the API is never reachable through here.
 */
export class TunnelProxy {
  constructor(
    private readonly cfg: PublicUrlConfigT,
    private readonly urls: UrlStore,
    private readonly domains: DomainStore,
    private readonly tunnels: TunnelRegistry,
    private readonly meter: TunnelMeter,
    private readonly forwarder: NodeForwarder
  ) {}

  readonly name = 'public-url';
  private proto: string | undefined;

  /** The subdomain a Host names, if it is a tunnel's Host at all. */
  private label(host: string): string | undefined {
    const d = this.cfg.tunnel_domain;
    if (!host.endsWith(`.${d}`) || host === this.urls.apiHost) return undefined;
    const label = host.slice(0, -(d.length + 1));
    return LABEL.test(label) ? label : undefined;
  }

  readonly matches = (host: string): boolean => {
    if (host === this.urls.apiHost || host === '127.0.0.1' || host === '[::1]' || host === 'localhost') return false;
    return this.label(host) !== undefined || this.domains.routes.has(host);
  };

  private tunnelFor(host: string): Tunnel | undefined {
    const label = this.label(host);
    if (label !== undefined) return this.tunnels.find(label);
    const urlId = this.domains.routes.get(host);
    return urlId ? this.tunnels.findByUrl(urlId) : undefined;
  }

  /** Why no tunnel here: none at all, or not connected; `node` when another node holds its client. */
  private async missing(
    host: string
  ): Promise<{ code: 'not_found' | 'tunnel_not_connected'; message: string; node?: string }> {
    const label = this.label(host);
    const urlId = label === undefined ? this.domains.routes.get(host) : undefined;
    const row = await (label !== undefined
      ? this.urls.bySubdomain(label)
      : urlId
        ? this.urls.byId(urlId)
        : undefined
    )?.catch(() => undefined);
    if (!row && !urlId) return { code: 'not_found', message: `No public URL at ${host}.` };
    const node = row?.state === 'connected' && row.node_url ? row.node_url : undefined;
    return { code: 'tunnel_not_connected', message: `No tunnel client is connected for ${host} right now.`, node };
  }

  /**
   * The tunnel's client is on another node (or on none): forward there, once (a forwarded
   * request is never forwarded again), else refuse.
   */
  private elsewhere(
    host: string,
    caller: string | undefined,
    forward: (node: string, fail: () => void) => void,
    refuse: (code: 'not_found' | 'tunnel_not_connected', message: string) => void
  ): void {
    void this.missing(host).then((m) => {
      if (m.node && caller === undefined)
        return forward(m.node, () =>
          refuse('tunnel_not_connected', `The node holding the tunnel for ${host} did not answer.`)
        );
      refuse(m.code, m.message);
    });
  }

  private hostOf(req: IncomingMessage): string {
    return (req.headers.host ?? '').toLowerCase().replace(/:\d+$/, '');
  }

  private open(req: IncomingMessage, t: Tunnel, upgrade: boolean, caller: string | undefined): MuxStream {
    const proto = (this.proto ??= new URL(this.urls.urlOf('x')).protocol.slice(0, -1));
    return t.mux.open({
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      headers: forwardedHeaders(
        withoutHop(req.rawHeaders),
        caller ?? req.socket.remoteAddress,
        proto,
        req.headers.host ?? '',
        upgrade
      ),
      upgrade,
    });
  }

  /** Counted both ways, within the account's bandwidth; an anonymous tunnel closes at its byte cap. */
  private metered(t: Tunnel, inbound: boolean): Metered {
    return new Metered(t.bucket, (n) => {
      this.meter.add(t.row.url_id, inbound ? n : 0, inbound ? 0 : n);
      t.carried += n;
      if (t.row.account_id === null && t.carried > this.cfg.anonymous.max_bytes)
        t.ws.close(4002, 'the anonymous byte cap is reached');
    });
  }

  readonly request = (req: IncomingMessage, res: ServerResponse): void => {
    const host = this.hostOf(req);
    const t = this.tunnelFor(host);
    const caller = this.forwarder.caller(req);
    if (!t) {
      return this.elsewhere(
        host,
        caller,
        (node, fail) => this.forwarder.request(node, req, res, fail),
        (code, message) => {
          req.resume();
          refuseResponse(res, code, message);
        }
      );
    }
    const stream = this.open(req, t, false, caller);
    // pipe, not pipeline: pipeline's abort signal costs more than the rest of a small request;
    // an error on either side ends the other through the handlers below.
    req.pipe(this.metered(t, true)).pipe(stream);
    stream.once('head', (h: HeadMeta) => {
      res.writeHead(h.status, headerObject(endToEnd(h.headers)));
      stream.pipe(this.metered(t, false)).pipe(res);
    });
    stream.on('error', () => {
      if (!res.headersSent) refuseResponse(res, 'tunnel_not_connected', 'The tunnel closed before the app answered.');
      else res.destroy();
    });
    req.on('error', () => stream.destroy());
    res.on('error', () => stream.destroy());
    res.once('close', () => {
      if (!res.writableFinished) stream.destroy();
    });
  };

  readonly upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const host = this.hostOf(req);
    const t = this.tunnelFor(host);
    const caller = this.forwarder.caller(req);
    if (!t) {
      return this.elsewhere(
        host,
        caller,
        (node, fail) => this.forwarder.upgrade(node, req, socket, head, fail),
        (code, message) => refuseSocket(socket, code, message)
      );
    }
    const stream = this.open(req, t, true, caller);
    if (head.length) stream.write(head);
    stream.once('head', (h: HeadMeta) => {
      const lines = [`HTTP/1.1 ${h.status} ${STATUS_CODES[h.status] ?? ''}`];
      const kept = endToEnd(h.headers, h.status === 101);
      for (let i = 0; i < kept.length; i += 2) lines.push(`${kept[i]}: ${kept[i + 1]}`);
      if (h.status !== 101) lines.push('Connection: close');
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
      pipeline(socket, this.metered(t, true), stream, () => undefined);
      pipeline(stream, this.metered(t, false), socket, () => undefined);
    });
    stream.once('error', () => socket.destroy());
    socket.once('close', () => stream.destroy());
  };
}
