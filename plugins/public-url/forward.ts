import { createHmac, timingSafeEqual } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { isIPv6, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { endToEnd } from './headers.js';

/** Set by a node forwarding a tunnel's request: `<ms>.<hmac>`, and the caller's address. */
export const VIA = 'x-svc-tunnel-via';
export const FOR = 'x-svc-tunnel-for';
const MAX_SKEW_MS = 60_000;

/** rawHeaders without the hop's own headers (whoever sent them: they never reach an app). */
export function withoutHop(raw: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    if (name !== VIA && name !== FOR) out.push(raw[i], raw[i + 1]);
  }
  return out;
}

/** How other nodes reach this one: the local end of the connection the tunnel client made. */
export function localNodeUrl(socket: Duplex): string {
  const s = socket as Socket;
  const a = s.localAddress ?? '127.0.0.1';
  return `http://${isIPv6(a) ? `[${a}]` : a}:${s.localPort}`;
}

/**
 * Requests for a tunnel whose client is connected to another node go to that node, which
 * serves them as its own. The hop is signed with a key derived from the master key the nodes
 * share, over the time, the Host and the caller's address, so only a node can name the caller.
 */
export class NodeForwarder {
  private readonly key: Buffer;
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

  constructor(masterKey: Buffer) {
    this.key = createHmac('sha256', masterKey).update('public-url: forward between nodes').digest();
  }

  private sign(at: string, host: string, caller: string): string {
    return createHmac('sha256', this.key).update(`${at}\n${host}\n${caller}`).digest('base64url');
  }

  /** The caller's address when another node forwarded this request, else undefined. */
  caller(req: IncomingMessage): string | undefined {
    const via = req.headers[VIA];
    const caller = req.headers[FOR];
    if (typeof via !== 'string' || typeof caller !== 'string') return undefined;
    const [at, mac] = via.split('.');
    if (!(Math.abs(Date.now() - Number(at)) <= MAX_SKEW_MS) || !mac) return undefined;
    const want = Buffer.from(this.sign(at, req.headers.host ?? '', caller));
    const got = Buffer.from(mac);
    return got.length === want.length && timingSafeEqual(got, want) ? caller : undefined;
  }

  private send(node: string, req: IncomingMessage): http.ClientRequest {
    const at = String(Date.now());
    const caller = req.socket.remoteAddress ?? '';
    const headers = withoutHop(req.rawHeaders);
    headers.push(VIA, `${at}.${this.sign(at, req.headers.host ?? '', caller)}`, FOR, caller);
    const u = new URL(node);
    return http.request({
      host: u.hostname.replace(/^\[|\]$/g, ''),
      port: u.port || 80,
      method: req.method,
      path: req.url,
      headers,
      agent: req.headers.upgrade ? false : this.agent,
    });
  }

  /** The request and its answer, through the node; `fail` answers when that node is unreachable. */
  request(node: string, req: IncomingMessage, res: ServerResponse, fail: () => void): void {
    const out = this.send(node, req);
    out.on('response', (r) => {
      res.writeHead(r.statusCode ?? 502, endToEnd(r.rawHeaders));
      r.pipe(res);
    });
    out.on('error', () => (res.headersSent ? res.destroy() : fail()));
    res.on('close', () => {
      if (!res.writableFinished) out.destroy();
    });
    req.pipe(out);
  }

  /** An upgrade through the node: its answer's head, then bytes both ways. */
  upgrade(node: string, req: IncomingMessage, socket: Duplex, head: Buffer, fail: () => void): void {
    const out = this.send(node, req);
    let answered = false;
    const answer = (r: IncomingMessage) => {
      answered = true;
      const upgraded = r.statusCode === 101;
      const kept = upgraded ? r.rawHeaders : [...endToEnd(r.rawHeaders), 'Connection', 'close'];
      const lines = [`HTTP/1.1 ${r.statusCode} ${r.statusMessage ?? ''}`];
      for (let i = 0; i < kept.length; i += 2) lines.push(`${kept[i]}: ${kept[i + 1]}`);
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    };
    out.on('upgrade', (r, upstream: Duplex, rest: Buffer) => {
      answer(r);
      if (rest.length) socket.write(rest);
      if (head.length) upstream.write(head);
      upstream.pipe(socket).on('error', () => upstream.destroy());
      socket.pipe(upstream).on('error', () => socket.destroy());
      upstream.on('close', () => socket.destroy());
      socket.on('close', () => upstream.destroy());
    });
    out.on('response', (r) => {
      answer(r);
      r.pipe(socket);
    });
    out.on('error', () => (answered ? socket.destroy() : fail()));
    socket.on('error', () => out.destroy());
    out.end();
  }
}
