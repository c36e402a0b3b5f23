import type { Duplex } from 'node:stream';
import type WebSocket from 'ws';

/** Answers an upgrade with an HTTP error in the conventions' shape and closes the socket. */
export function refuseUpgrade(socket: Duplex, status: number, code: string, message: string): void {
  const body = JSON.stringify({ error: { code, message, status } });
  const reason = status === 401 ? 'Unauthorized' : status === 429 ? 'Too Many Requests' : 'Not Found';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n`
      + `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

/** How long a closing socket may take to answer the close frame before it is destroyed. */
const CLOSE_GRACE_MS = 2000;

/** What one socket may hold, and what is told when it overflows. */
export interface SocketBounds {
  /** Bytes waiting above which the socket is a slow consumer (4100). */
  maxBuffered: number;
  /** How long a slow consumer has to read what waits and its close frame before it is destroyed. */
  slowDrainMs: number;
  /** Called once per socket closed as a slow consumer (counted at /metrics). */
  onSlow: () => void;
}

/**
 * Sends on one socket within a bound: above `maxBuffered` bytes waiting, the socket is a slow
 * consumer and is closed with 4100 rather than buffered for without end.
 */
export class BoundedSocket {
  ended = false;
  /** Heard from since the last check: a frame, or the pong of the last ping. */
  private alive = true;

  constructor(
    readonly ws: WebSocket,
    private readonly bounds: SocketBounds
  ) {
    const heard = () => {
      this.alive = true;
    };
    ws.on('message', heard);
    ws.on('pong', heard);
  }

  /**
   * Called every activity timeout: a socket silent since the last call, and deaf to the ping it
   * got then, is gone (a peer that vanished without a FIN); `code` closes it.
   */
  checkAlive(code: number): void {
    if (this.ended) return;
    if (!this.alive) {
      this.end(code, 'no activity: the ping was not answered');
      this.ws.terminate();
      return;
    }
    this.alive = false;
    this.ws.ping();
  }

  send(frame: string): void {
    if (this.ended) return;
    if (this.ws.bufferedAmount > this.bounds.maxBuffered) {
      this.bounds.onSlow();
      // Nothing more is queued, so what waits stays bounded; the client that reads it gets the 4100 after it.
      return this.end(4100, 'slow consumer: too much data waiting', this.bounds.slowDrainMs);
    }
    this.ws.send(frame);
  }

  /**
   * Sends the close frame behind what is already waiting; a peer that has not read up to it and
   * answered within `graceMs` is destroyed (it sees 1006).
   */
  end(code: number, reason: string, graceMs = CLOSE_GRACE_MS): void {
    if (this.ended) return;
    this.ended = true;
    try {
      this.ws.close(code, reason);
    } catch {
      this.ws.terminate();
    }
    setTimeout(() => this.ws.terminate(), graceMs).unref();
  }
}
