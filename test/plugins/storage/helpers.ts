import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { activate } from '../../helpers/app.js';

/** When a presigned URL expires by its own query: X-Amz-Date (`YYYYMMDDTHHMMSSZ`) + X-Amz-Expires seconds, as an ISO string. */
export function urlExpiry(url: string): string {
  const q = new URL(url).searchParams;
  const m = /^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/.exec(q.get('X-Amz-Date') ?? '');
  if (!m) throw new Error(`no X-Amz-Date in ${url}`);
  return new Date(
    Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]) + Number(q.get('X-Amz-Expires')) * 1000
  ).toISOString();
}

/** Deterministic pseudo-random bytes, generated as they are read: nothing held in memory. */
export function generated(size: number, seed = 1, chunk = 1 << 20): Readable {
  let sent = 0;
  let x = seed >>> 0 || 1;
  return new Readable({
    read() {
      if (sent >= size) return this.push(null);
      const n = Math.min(chunk, size - sent);
      const buf = Buffer.allocUnsafe(n);
      for (let i = 0; i < n; i += 4) {
        x ^= x << 13;
        x >>>= 0;
        x ^= x >>> 17;
        x ^= x << 5;
        x >>>= 0;
        if (i + 4 <= n) buf.writeUInt32LE(x, i);
        else for (let j = i; j < n; j++) buf[j] = (x >>> ((j - i) * 8)) & 0xff;
      }
      sent += n;
      this.push(buf);
    },
  });
}

export async function sha256Of(stream: AsyncIterable<Uint8Array>): Promise<{ hash: string; size: number }> {
  const h = createHash('sha256');
  let size = 0;
  for await (const c of stream) {
    h.update(c);
    size += c.length;
  }
  return { hash: h.digest('hex'), size };
}

/** The error an SDK call fails with (the test fails if it succeeds). */
export async function errorOf(
  p: Promise<unknown>
): Promise<Error & { name: string; $metadata: { httpStatusCode?: number } }> {
  try {
    await p;
  } catch (e) {
    return e as any;
  }
  throw new Error('expected the call to fail');
}

export { activate };
