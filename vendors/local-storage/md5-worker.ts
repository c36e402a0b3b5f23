import { Worker } from 'node:worker_threads';

// MD5 of large bodies on a worker thread. On the event loop, MD5 (~450 MiB/s a core) costs
// about as much as receiving and writing the bytes; on its own thread it runs beside them.
// One worker per process, started on the first large body and referenced only while a
// body is being hashed (it never keeps an idle process alive). Small bodies are hashed
// inline: posting them would cost more.

const SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const jobs = new Map();
parentPort.on('message', (m) => {
  if (m.op === 'data') {
    let h = jobs.get(m.id);
    if (!h) jobs.set(m.id, (h = createHash('md5')));
    h.update(new Uint8Array(m.buf));
    parentPort.postMessage({ id: m.id, acked: m.buf.byteLength });
  } else if (m.op === 'end') {
    const h = jobs.get(m.id) ?? createHash('md5');
    jobs.delete(m.id);
    parentPort.postMessage({ id: m.id, md5: h.digest('hex') });
  } else if (m.op === 'drop') {
    jobs.delete(m.id);
  }
});
`;

/** Bytes posted and not yet hashed before a job waits: bounds the memory a fast client can pin. */
const MAX_OUTSTANDING = 8 * 1024 * 1024;

interface Job {
  outstanding: number;
  wake?: () => void;
  done?: { resolve(md5: string): void; reject(e: Error): void };
  failed?: Error;
}

let worker: Worker | undefined;
const jobs = new Map<number, Job>();
let nextId = 1;

function start(): Worker {
  if (worker) return worker;
  const w = new Worker(SOURCE, { eval: true });
  w.on('message', (m: { id: number; acked?: number; md5?: string }) => {
    const job = jobs.get(m.id);
    if (!job) return;
    if (m.acked !== undefined) {
      job.outstanding -= m.acked;
      if (job.outstanding <= MAX_OUTSTANDING) job.wake?.();
    } else if (m.md5 !== undefined) {
      finished(m.id);
      job.done?.resolve(m.md5);
    }
  });
  const fail = (e: Error) => {
    worker = undefined;
    for (const [id, job] of jobs) {
      finished(id);
      job.failed = e;
      job.wake?.();
      job.done?.reject(e);
    }
  };
  w.on('error', fail);
  w.on('exit', (code) => fail(new Error(`the MD5 worker exited (${code})`)));
  w.unref(); // after the listeners: adding a 'message' listener refs the worker again
  worker = w;
  return w;
}

function finished(id: number): boolean {
  const had = jobs.delete(id);
  if (had && jobs.size === 0) worker?.unref();
  return had;
}

/** A running MD5 on the worker: `update` in order, then `digest` once (or `drop`). */
export class OffThreadMd5 {
  private readonly id = nextId++;
  private readonly job: Job = { outstanding: 0 };
  private readonly w = start();

  constructor() {
    jobs.set(this.id, this.job);
    this.w.ref();
  }

  /** Hash a copy of `chunks`; waits while the worker is more than MAX_OUTSTANDING behind. */
  async update(chunks: Buffer[]): Promise<void> {
    if (this.job.failed) throw this.job.failed;
    const total = chunks.reduce((n, c) => n + c.length, 0);
    // A fresh ArrayBuffer of exactly these bytes, moved (not copied again) to the worker.
    const copy = Buffer.allocUnsafeSlow(total);
    let off = 0;
    for (const c of chunks) off += c.copy(copy, off);
    this.job.outstanding += total;
    this.w.postMessage({ op: 'data', id: this.id, buf: copy.buffer }, [copy.buffer]);
    while (this.job.outstanding > MAX_OUTSTANDING && !this.job.failed)
      await new Promise<void>((r) => (this.job.wake = r));
    this.job.wake = undefined;
    if (this.job.failed) throw this.job.failed;
  }

  digest(): Promise<string> {
    if (this.job.failed) return Promise.reject(this.job.failed);
    return new Promise((resolve, reject) => {
      this.job.done = { resolve, reject };
      this.w.postMessage({ op: 'end', id: this.id });
    });
  }

  drop(): void {
    if (!finished(this.id)) return;
    this.w.postMessage({ op: 'drop', id: this.id });
  }
}
