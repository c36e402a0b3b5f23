// A load client for throughput targets: one keep-alive HTTP/1.1 connection a loop, the request
// written from bytes serialized once, and of the response only the status line, Content-Length
// and body read (what wrk or autocannon do). The bench shares its two cores with the gateway
// it measures, so the client's CPU comes out of the gateway's figure: undici's request path
// cost ~1.2 ms of CPU a call, a good part of what separates a gateway from its anchor.
import { connect } from 'node:net';

const HEAD_END = Buffer.from('\r\n\r\n');

/** A request's bytes: head and body, written as they are on every call. */
export function rawRequest(base, { method = 'POST', path, headers = {}, body = Buffer.alloc(0) }) {
  const { host } = new URL(base);
  const lines = [`${method} ${path} HTTP/1.1`, `host: ${host}`, `content-length: ${body.length}`];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  return { head: Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), body };
}

/** One connection; `send` resolves with the status and the body of the answer, one call at a time. */
export class RawConnection {
  constructor(base) {
    const { hostname, port } = new URL(base);
    this.socket = connect({ host: hostname, port: Number(port), noDelay: true });
    this.socket.on('data', (d) => this.onData(d));
    this.socket.on('error', (e) => this.fail(e));
    this.socket.on('close', () => this.fail(new Error('the gateway closed the connection')));
    this.pending = undefined;
  }

  send({ head, body }) {
    if (this.pending) return Promise.reject(new Error('one call at a time on a RawConnection'));
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject, chunks: [], bytes: 0, status: 0, bodyAt: -1, length: -1 };
      this.socket.cork();
      this.socket.write(head);
      if (body.length) this.socket.write(body);
      this.socket.uncork();
    });
  }

  onData(chunk) {
    const p = this.pending;
    if (!p) return this.fail(new Error('bytes from the gateway with no call waiting'));
    p.chunks.push(chunk);
    p.bytes += chunk.length;
    if (p.bodyAt < 0) {
      const all = p.chunks.length === 1 ? chunk : Buffer.concat(p.chunks);
      const end = all.indexOf(HEAD_END);
      if (end < 0) return;
      const head = all.toString('latin1', 0, end);
      p.status = Number(head.slice(9, 12));
      const m = /\r\ncontent-length:\s*(\d+)/i.exec(head);
      if (!m) return this.fail(new Error(`an answer without Content-Length: ${head.slice(0, 200)}`));
      p.length = Number(m[1]);
      p.bodyAt = end + 4;
      p.chunks = [all];
    }
    if (p.bytes < p.bodyAt + p.length) return;
    if (p.bytes > p.bodyAt + p.length) return this.fail(new Error('more bytes than the answer has'));
    const all = p.chunks.length === 1 ? p.chunks[0] : Buffer.concat(p.chunks);
    this.pending = undefined;
    p.resolve({ status: p.status, body: all.subarray(p.bodyAt) });
  }

  fail(e) {
    const p = this.pending;
    this.pending = undefined;
    p?.reject(e);
  }

  close() {
    this.socket.removeAllListeners('close');
    this.socket.destroy();
  }
}
