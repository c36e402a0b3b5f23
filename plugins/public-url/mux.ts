import { Duplex } from 'node:stream';
import type WebSocket from 'ws';

// The tunnel's framing over its one WebSocket (docs/public-url.md): every binary message is one
// frame, [type u8][stream id u32 BE][payload]. The gateway opens streams (one per HTTP request
// or upgrade) and numbers them; both sides send DATA only within the credit the other granted,
// so a slow reader stops its sender and nothing is buffered beyond one window a stream.

export const FRAME = { OPEN: 1, HEAD: 2, DATA: 3, END: 4, RESET: 5, CREDIT: 6 } as const;
const HEADER = 5;
const MAX_DATA = 64 * 1024;

/** OPEN's payload: the request as the public sent it (headers in rawHeaders order). */
export interface OpenMeta {
  method: string;
  url: string;
  headers: string[];
  upgrade: boolean;
}

/** The part of a net.Socket the Mux batches writes with. */
export interface Corkable {
  cork(): void;
  uncork(): void;
}

/** HEAD's payload: the local server's status line and headers (101 for an accepted upgrade). */
export interface HeadMeta {
  status: number;
  headers: string[];
}

function frame(type: number, id: number, payload?: Buffer): Buffer {
  const out = Buffer.allocUnsafe(HEADER + (payload?.length ?? 0));
  out[0] = type;
  out.writeUInt32BE(id, 1);
  payload?.copy(out, HEADER);
  return out;
}

/** One request's bytes both ways; `head` is emitted once with the response's HeadMeta. */
export class MuxStream extends Duplex {
  private credit: number;
  private unacked = 0;
  private blocked?: () => void;
  private peerReset = false;

  constructor(
    private readonly mux: Mux,
    readonly id: number,
    private readonly window: number
  ) {
    super({ allowHalfOpen: true, readableHighWaterMark: window, writableHighWaterMark: window });
    this.credit = window;
  }

  /** Send the response head (the tunnel client's side). */
  sendHead(meta: HeadMeta): void {
    this.mux.send(FRAME.HEAD, this.id, Buffer.from(JSON.stringify(meta)));
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (e?: Error | null) => void): void {
    this.sendData(chunk, cb);
  }

  private sendData(chunk: Buffer, cb: (e?: Error | null) => void): void {
    while (chunk.length > 0) {
      if (this.destroyed) return cb(new Error('stream closed'));
      if (this.credit <= 0) {
        this.blocked = () => this.sendData(chunk, cb);
        return;
      }
      const n = Math.min(this.credit, chunk.length, MAX_DATA);
      this.mux.send(FRAME.DATA, this.id, chunk.subarray(0, n));
      this.credit -= n;
      chunk = chunk.subarray(n);
    }
    cb();
  }

  override _final(cb: (e?: Error | null) => void): void {
    this.mux.send(FRAME.END, this.id);
    cb();
  }

  override _read(): void {
    this.grant();
  }

  private grant(): void {
    if (this.unacked === 0 || this.destroyed) return;
    const b = Buffer.allocUnsafe(4);
    b.writeUInt32BE(this.unacked);
    this.unacked = 0;
    this.mux.send(FRAME.CREDIT, this.id, b);
  }

  override _destroy(err: Error | null, cb: (e?: Error | null) => void): void {
    this.blocked = undefined;
    if (!this.peerReset && !(this.readableEnded && this.writableFinished))
      this.mux.send(FRAME.RESET, this.id, Buffer.from(err?.message ?? 'closed'));
    this.mux.forget(this.id);
    cb(err);
  }

  /** @internal a frame from the peer for this stream */
  receive(type: number, payload: Buffer): void {
    switch (type) {
      case FRAME.HEAD:
        this.emit('head', JSON.parse(payload.toString('utf8')) as HeadMeta);
        break;
      case FRAME.DATA:
        this.unacked += payload.length;
        // Granted back once read: at once while the reader keeps up, else when it asks (_read).
        if (this.push(payload) && this.unacked >= this.window / 4) this.grant();
        break;
      case FRAME.END:
        this.push(null);
        break;
      case FRAME.CREDIT: {
        this.credit += payload.readUInt32BE(0);
        const resume = this.blocked;
        this.blocked = undefined;
        resume?.();
        break;
      }
      case FRAME.RESET:
        this.peerReset = true;
        this.destroy(new Error(`reset by peer: ${payload.toString('utf8').slice(0, 200)}`));
        break;
    }
  }
}

/**
 * Streams multiplexed over one WebSocket. The gateway's side calls open(); the client's side
 * gets `onOpen` for each stream the gateway opened.
 */
export class Mux {
  private readonly streams = new Map<number, MuxStream>();
  private nextId = 1;
  private closed = false;
  private corked = false;

  /**
   * `socket` is the WebSocket's own TCP socket: frames sent in one tick (a request's OPEN, DATA
   * and END; a response's HEAD, DATA and END; credits) leave in one write instead of one each.
   */
  constructor(
    private readonly ws: WebSocket,
    private readonly window: number,
    private readonly onOpen?: (stream: MuxStream, meta: OpenMeta) => void,
    private readonly socket?: Corkable
  ) {
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary && data.length >= HEADER) this.receive(data);
    });
    ws.on('close', () => this.shut(new Error('tunnel closed')));
  }

  get size(): number {
    return this.streams.size;
  }

  open(meta: OpenMeta): MuxStream {
    const id = this.nextId++;
    const s = new MuxStream(this, id, this.window);
    this.streams.set(id, s);
    this.send(FRAME.OPEN, id, Buffer.from(JSON.stringify(meta)));
    return s;
  }

  /** @internal */
  send(type: number, id: number, payload?: Buffer): void {
    if (this.closed || this.ws.readyState !== 1) return;
    if (this.socket && !this.corked) {
      this.corked = true;
      this.socket.cork();
      process.nextTick(this.uncork);
    }
    this.ws.send(frame(type, id, payload));
  }

  private readonly uncork = (): void => {
    this.corked = false;
    this.socket?.uncork();
  };

  /** @internal */
  forget(id: number): void {
    this.streams.delete(id);
  }

  private receive(data: Buffer): void {
    const type = data[0];
    const id = data.readUInt32BE(1);
    const payload = data.subarray(HEADER);
    if (type === FRAME.OPEN && this.onOpen && !this.streams.has(id)) {
      const s = new MuxStream(this, id, this.window);
      this.streams.set(id, s);
      this.onOpen(s, JSON.parse(payload.toString('utf8')) as OpenMeta);
      return;
    }
    this.streams.get(id)?.receive(type, payload);
  }

  /** Every stream ends with an error: the tunnel went away. */
  shut(err: Error): void {
    this.closed = true;
    for (const s of [...this.streams.values()]) s.destroy(err);
    this.streams.clear();
  }
}
