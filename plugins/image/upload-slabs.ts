import type { FastifyRequest } from 'fastify';
import { errorCodes } from 'fastify';

/** Bodies under this are read as Fastify reads them: small fresh buffers cost little. */
const SMALLEST_SLAB = 256 * 1024;

/**
 * Reused buffers for image uploads. Fastify's whole-body reader concatenates the parser's
 * chunks into a fresh Buffer a request, and fresh memory costs more than the copy: the pages
 * are faulted in one by one, on the event loop (an 8.7 MB 40-MP upload stalls it for
 * milliseconds), and memory outside V8's heap growing fast makes V8 collect more often. A body
 * whose declared length is at least SMALLEST_SLAB is copied into a slab of the next power of
 * two instead, taken from the free ones of that size when there is one. A slab goes back once
 * its request has answered 200 (the engine that answered has read the image; an attempt the
 * router gave up on may still be reading it, and its output is thrown away whatever it reads),
 * or once the body is refused before any engine saw it (form.ts: the parser or the schema
 * refusing it, or any answer given before the image was handed out). After any other answer
 * it is left to the collector, since an engine may still be reading it. Free slabs are kept
 * up to `keepBytes` in all (0: none kept).
 * bench/image measures it; BENCHMARKS.md, `image`, has the figures.
 */
export class UploadSlabs {
  private readonly free = new Map<number, Buffer[]>();
  private keptBytes = 0;
  private readonly lent = new WeakMap<FastifyRequest, Buffer>();

  constructor(private readonly keepBytes: number) {}

  /** Read the request's whole body (at most `limit` bytes), into a slab when its declared length calls for one. */
  read(req: FastifyRequest, payload: NodeJS.ReadableStream, limit: number): Promise<Buffer> {
    const declared = Number(req.headers['content-length']);
    if (declared > limit) return Promise.reject(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
    const slab = this.keepBytes > 0 && declared >= SMALLEST_SLAB ? this.take(declared) : undefined;
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let received = 0;
      const finish = (err?: Error) => {
        payload.removeListener('data', onData);
        payload.removeListener('end', onEnd);
        payload.removeListener('error', onError);
        if (err) {
          if (slab) this.give(slab);
          reject(err);
        }
      };
      const onData = (chunk: Buffer) => {
        if (received + chunk.length > limit) return finish(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
        // A body longer than it declared is refused at its end (its slab then holds only the start).
        if (!slab) chunks.push(chunk);
        else if (received + chunk.length <= slab.length) chunk.copy(slab, received);
        received += chunk.length;
      };
      const onEnd = () => {
        if (!Number.isNaN(declared) && received !== declared)
          return finish(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
        finish();
        if (!slab) return resolve(Buffer.concat(chunks, received));
        this.lent.set(req, slab);
        resolve(slab.subarray(0, received));
      };
      const onError = (e: Error & { statusCode?: number }) => {
        if (!(typeof e.statusCode === 'number' && e.statusCode >= 400)) e.statusCode = 400;
        finish(e);
      };
      payload.on('data', onData);
      payload.on('end', onEnd);
      payload.on('error', onError);
      payload.resume();
    });
  }

  /** The request is done with its slab: `reusable` when nothing may still read it (see the class comment). */
  settle(req: FastifyRequest, reusable: boolean): void {
    const slab = this.lent.get(req);
    if (!slab) return;
    this.lent.delete(req);
    if (reusable) this.give(slab);
  }

  /** Bytes held by free slabs now. */
  get freeBytes(): number {
    return this.keptBytes;
  }

  private take(bytes: number): Buffer {
    const size = 2 ** Math.ceil(Math.log2(bytes));
    const slab = this.free.get(size)?.pop();
    if (!slab) return Buffer.allocUnsafeSlow(size);
    this.keptBytes -= size;
    return slab;
  }

  private give(slab: Buffer): void {
    if (this.keptBytes + slab.length > this.keepBytes) return;
    const list = this.free.get(slab.length) ?? [];
    list.push(slab);
    this.free.set(slab.length, list);
    this.keptBytes += slab.length;
  }
}
