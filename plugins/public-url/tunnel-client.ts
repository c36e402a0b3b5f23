import { EventEmitter } from 'node:events';
import http, { type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { pipeline } from 'node:stream';
import WebSocket from 'ws';
import { headerObject } from './headers.js';
import { type Corkable, Mux, type MuxStream, type OpenMeta } from './mux.js';

export interface TunnelClientOptions {
  /** The record's connect_url (ws://…/v1/public-url/tunnel/{url_id}). */
  connectUrl: string;
  /** The API key, or an anonymous record's token. */
  secret: string;
  /** Local port the tunnel exposes. */
  port: number;
  host?: string;
}

const CLOSE_FINAL = new Set([4001, 4002]);

/**
 * The local side of a tunnel (what `svc-gateway tunnel PORT` runs): one WebSocket to the
 * gateway; each stream the gateway opens becomes a request to host:port, its response (or
 * upgrade) streamed back. Reconnects after a drop, with backoff, to the same record and URL.
 * Events: `connected` (hello from the gateway: url), `disconnected` (code, reason), `closed`.
 */
export class TunnelClient extends EventEmitter {
  private ws: WebSocket | undefined;
  private stopped = false;
  private retryMs = 200;
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  url: string | undefined;

  constructor(private readonly opts: TunnelClientOptions) {
    super();
  }

  start(): void {
    if (this.stopped) return;
    const ws = new WebSocket(this.opts.connectUrl, {
      headers: { authorization: `Bearer ${this.opts.secret}` },
      perMessageDeflate: false,
      // A zero mask: ws then neither copies nor XORs each frame (both ends). Masking guards
      // shared caches against scripts in browsers; this client is not one (docs/public-url.md).
      generateMask: (mask: Buffer) => mask.fill(0),
    });
    this.ws = ws;
    ws.on('unexpected-response', (_req, res: IncomingMessage) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => {
        const e = safeJson(body)?.error;
        this.emit('refused', res.statusCode, e?.code ?? 'unknown', e?.message ?? body.slice(0, 200));
        // A refusal that retrying cannot fix ends the client.
        if (res.statusCode && res.statusCode < 500 && res.statusCode !== 429) this.stop();
        else this.retry();
      });
    });
    ws.on('error', () => undefined);
    let socket: Corkable | undefined;
    ws.once('upgrade', (res: IncomingMessage) => (socket = res.socket));
    ws.once('message', (data, isBinary) => {
      const hello = isBinary ? undefined : safeJson(String(data));
      if (hello?.type !== 'hello') return ws.close(1002, 'expected hello');
      this.retryMs = 200;
      this.url = hello.url;
      new Mux(ws, hello.window, (s, meta) => this.serve(s, meta), socket);
      this.emit('connected', hello.url);
    });
    ws.on('close', (code, reason) => {
      if (this.ws !== ws) return;
      this.emit('disconnected', code, String(reason));
      if (CLOSE_FINAL.has(code)) this.stop();
      else this.retry();
    });
  }

  private retry(): void {
    if (this.stopped) return;
    const wait = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, 5000);
    setTimeout(() => this.start(), wait).unref();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.ws?.close(1000, 'client stopped');
    this.agent.destroy();
    this.emit('closed');
  }

  private serve(stream: MuxStream, meta: OpenMeta): void {
    const req = http.request({
      host: this.opts.host ?? '127.0.0.1',
      port: this.opts.port,
      method: meta.method,
      path: meta.url,
      headers: headerObject(meta.headers),
      agent: meta.upgrade ? false : this.agent,
    });
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      stream.sendHead({ status: res.statusCode ?? 502, headers: res.rawHeaders });
      // pipe, not pipeline: pipeline's abort signal costs more than the rest of a small request.
      res.pipe(stream);
      res.once('error', (e) => stream.destroy(e));
    });
    req.on('upgrade', (res, socket: Duplex, head: Buffer) => {
      answered = true;
      stream.sendHead({ status: 101, headers: res.rawHeaders });
      if (head.length) stream.write(head);
      pipeline(socket, stream, () => undefined);
      pipeline(stream, socket, () => undefined);
    });
    req.on('error', (e) => {
      if (answered) return void stream.destroy(e);
      const body = Buffer.from(
        JSON.stringify({
          error: { code: 'tunnel_not_connected', message: `The local app did not answer: ${e.message}` },
        })
      );
      stream.sendHead({
        status: 502,
        headers: ['Content-Type', 'application/json', 'Content-Length', String(body.length)],
      });
      stream.end(body);
    });
    // An upgrade's stream carries the socket's bytes after the 101 only: it is read once upgraded.
    if (meta.upgrade) {
      req.end();
    } else {
      stream.pipe(req);
    }
    stream.on('error', () => req.destroy());
  }
}

function safeJson(s: string): any {
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}
