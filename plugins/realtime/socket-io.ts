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
    private readonly maxBuffered: number
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
    if (this.ws.bufferedAmount > this.maxBuffered) return this.end(4100, 'slow consumer: too much data waiting');
    this.ws.send(frame);
  }

  end(code: number, reason: string): void {
    if (this.ended) return;
    this.ended = true;
    try {
      this.ws.close(code, reason);
    } catch {
      this.ws.terminate();
    }
    setTimeout(() => this.ws.terminate(), CLOSE_GRACE_MS).unref();
  }
}
