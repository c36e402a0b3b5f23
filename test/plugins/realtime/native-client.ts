import { once } from 'node:events';
import WebSocket from 'ws';

/** A native-protocol client for tests: frames queue up, `next` waits for one that matches. */
export class NativeClient {
  readonly frames: any[] = [];
  private waiters: Array<{ match: (f: any) => boolean; resolve: (f: any) => void }> = [];
  readonly closed: Promise<{ code: number; reason: string }>;

  constructor(readonly ws: WebSocket) {
    ws.on('message', (raw) => {
      const f = JSON.parse(String(raw));
      const w = this.waiters.find((x) => x.match(f));
      if (w) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(f);
      } else this.frames.push(f);
    });
    this.closed = new Promise((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })));
  }

  static async open(endpoint: string, token: string): Promise<NativeClient> {
    const ws = new WebSocket(`${endpoint}?token=${encodeURIComponent(token)}`);
    const c = new NativeClient(ws);
    await once(ws, 'open');
    await c.next((f) => f.type === 'welcome');
    return c;
  }

  /** The first frame (queued or coming) that matches. */
  next(match: (f: any) => boolean): Promise<any> {
    const i = this.frames.findIndex(match);
    if (i >= 0) return Promise.resolve(this.frames.splice(i, 1)[0]);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  send(frame: object): void {
    this.ws.send(JSON.stringify(frame));
  }

  /** Sends a frame with an id and waits for the answer that carries it. */
  ask(frame: object & { id: string }): Promise<any> {
    this.send(frame);
    return this.next((f) => f.id === frame.id);
  }

  async close(): Promise<void> {
    if (this.ws.readyState !== WebSocket.CLOSED) {
      this.ws.close();
      await this.closed;
    }
  }
}

/** The HTTP status a refused upgrade answered with. */
export async function refusedWith(url: string): Promise<{ status: number; body: any }> {
  const ws = new WebSocket(url);
  ws.on('error', () => undefined);
  const [, res] = await once(ws, 'unexpected-response');
  let body = '';
  for await (const c of res) body += c;
  ws.terminate();
  return { status: res.statusCode, body: JSON.parse(body) };
}
