import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the next request to a fake does; unset fields take the fake's defaults. */
export interface Script {
  /** Answer with this HTTP status and the vendor's error body. */
  status?: number;
  retryAfter?: string;
  /** Accept the request and never answer (headers never sent). */
  stall?: boolean;
  /** Stream: send the first content event(s), then stall forever. */
  stallAfter?: number;
  /** Stream: send a garbage event after this many content events. */
  malformedAfter?: number;
  /** Stream: end the body after this many content events without the closing event. */
  cutAfter?: number;
  content?: string;
  toolCall?: { name: string; arguments: string };
  usage?: { input: number; output: number; cacheRead?: number; cacheWrite?: number };
  /** Wait this long before answering. */
  delayMs?: number;
  /** Only for a request whose path matches; requests to other paths pass this script by. */
  path?: RegExp;
}

export interface FakeRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** Parsed JSON, else the text. */
  body: any;
  /** The body as it arrived (multipart uploads, binary). */
  bytes: Buffer;
}

/** A loopback HTTP server whose behaviour is scripted per request, closed with everything it holds open. */
export class FakeServer {
  url = '';
  readonly requests: FakeRequest[] = [];
  private readonly queue: Script[] = [];
  defaults: Script = {};
  private server: Server;
  private readonly open = new Set<ServerResponse>();

  constructor(private readonly handle: (req: FakeRequest, res: ServerResponse, s: Script) => void | Promise<void>) {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const bytes = Buffer.concat(chunks);
        const raw = bytes.toString('utf8');
        let body: any = null;
        try {
          body = raw ? JSON.parse(raw) : null;
        } catch {
          body = raw;
        }
        const r = {
          method: req.method ?? 'GET',
          path: (req.url ?? '/').split('?')[0],
          headers: req.headers,
          body,
          bytes,
        };
        this.requests.push(r);
        const at = this.queue.findIndex((q) => !q.path || q.path.test(r.path));
        const s = { ...this.defaults, ...(at < 0 ? {} : this.queue.splice(at, 1)[0]) };
        this.open.add(res);
        res.on('close', () => this.open.delete(res));
        if (s.delayMs) await new Promise((ok) => setTimeout(ok, s.delayMs));
        if (s.stall) return;
        await this.handle(r, res, s);
      });
    });
  }

  /** Responses still open (a stalled stream the client has not hung up on). */
  get openResponses(): number {
    return this.open.size;
  }

  /** Script the next requests, in order. */
  next(...scripts: Script[]): this {
    this.queue.push(...scripts);
    return this;
  }

  async start(prefix = ''): Promise<this> {
    await new Promise<void>((ok) => this.server.listen(0, '127.0.0.1', ok));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${prefix}`;
    return this;
  }

  async close(): Promise<void> {
    for (const r of this.open) r.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((ok) => this.server.close(() => ok()));
  }
}

export function words(text: string): string[] {
  return text.match(/\S+\s*/g) ?? [];
}

export function sse(res: ServerResponse, data: unknown, event?: string): void {
  res.write(`${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
}
