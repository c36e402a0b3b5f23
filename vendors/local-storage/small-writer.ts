import { Worker } from 'node:worker_threads';

// Small objects written and committed on a worker thread, in batches: every small put that
// arrives while the worker is busy goes in its next batch. For each object of a batch the
// worker creates the temp file and writes it; then syncs them all; then closes them and
// commits each by renaming it over the object's metadata file. On the event loop that work
// cost two trips to libuv's thread pool an object (each a futex wake-up and a completion,
// the dearest part of a 1 KiB put on a VM) plus a rename, a stat and a close; here it is one
// message each way a batch.
//
// The syncs run three at a time, on libuv's pool: one after another, each fdatasync of a new
// file commits the file system's journal again (ext4 allocates a delayed-allocation file's
// blocks at writeback, which is new metadata), at ~0.3-1.3 ms a commit on a VM's disk;
// several at once are covered by one journal commit (group commit). Three, not the pool's
// four, so the rest of the process (a GET's reads, DNS lookups) always finds a pool thread
// free. Measured alone (BENCHMARKS.md): a batch of 8 synced in 1.34-1.40 ms one by one,
// 0.83-0.88 ms three at a time.

const SOURCE = `
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
function writeAll(fd, buf) {
  let off = 0;
  while (off < buf.length) off += fs.writeSync(fd, buf, off, buf.length - off);
}
function oldMeta(path) {
  let file;
  try { file = fs.readFileSync(path); } catch (e) { if (e.code === 'ENOENT' || e.code === 'ENOTDIR') return null; throw e; }
  const nl = file.indexOf(10);
  return JSON.parse(file.toString('utf8', 0, nl < 0 ? file.length : nl));
}
const fdatasync = (fd) => new Promise((resolve) => fs.fdatasync(fd, (e) => resolve(e)));
parentPort.on('message', async ({ id, items, sync }) => {
  const out = items.map(() => ({}));
  const fds = items.map((it, i) => {
    try {
      const fd = fs.openSync(it.tmp, 'wx');
      try { writeAll(fd, it.data); } catch (e) { fs.closeSync(fd); throw e; }
      return fd;
    } catch (e) { out[i].error = { code: e.code, message: e.message }; return -1; }
  });
  if (sync) {
    let next = 0;
    const lane = async () => {
      while (next < fds.length) {
        const i = next++;
        if (fds[i] < 0) continue;
        const e = await fdatasync(fds[i]);
        if (e) out[i].error = { code: e.code, message: e.message };
      }
    };
    await Promise.all([lane(), lane(), lane()]);
  }
  for (let i = 0; i < items.length; i++) {
    if (fds[i] < 0) continue;
    try { fs.closeSync(fds[i]); } catch {}
  }
  for (let i = 0; i < items.length; i++) {
    if (out[i].error) continue;
    const it = items[i];
    try {
      const old = oldMeta(it.meta);
      fs.renameSync(it.tmp, it.meta);
      out[i].replaced = old ? old.size : 0;
      if (old && !old.inline) { try { fs.unlinkSync(it.stem + '.' + old.version + '.v'); } catch {} }
    } catch (e) { out[i].error = { code: e.code, message: e.message }; out[i].written = true; }
  }
  parentPort.postMessage({ id, out });
});
`;

export interface SmallWrite {
  /** Temp file to create (must not exist), in the same file system as `meta`. */
  tmp: string;
  /** The whole metadata file: JSON, a newline, the bytes. */
  data: Buffer;
  /** The metadata file the temp file is renamed over (its directory must exist). */
  meta: string;
  /** Name stem of the object's data files, to free the data file of a large object replaced. */
  stem: string;
}

/** What became of one write: the size of the object it replaced, or why it failed. */
export type SmallWriteResult = { replaced: number } | { error: NodeJS.ErrnoException; written: boolean };

interface Pending {
  item: SmallWrite;
  resolve(r: SmallWriteResult): void;
  reject(e: Error): void;
}

class SmallWriter {
  private worker: Worker | undefined;
  private queue: Pending[] = [];
  private inFlight: Pending[] | undefined;
  private batchId = 0;
  private scheduled = false;

  constructor(private readonly sync: boolean, private readonly maxBatch = 64) {}

  /** Write, sync and commit one small object with the next batch. */
  write(item: SmallWrite): Promise<SmallWriteResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      // Batch what arrives in this turn of the event loop; later arrivals wait for the batch in flight.
      if (!this.scheduled && !this.inFlight) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.send();
        });
      }
    });
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(SOURCE, { eval: true });
    w.on('message', (m: { id: number; out: Array<{ replaced?: number; error?: { code?: string; message: string }; written?: boolean }> }) => {
      const batch = this.inFlight;
      if (!batch || m.id !== this.batchId) return;
      this.inFlight = undefined;
      batch.forEach((p, i) => {
        const o = m.out[i];
        if (o.error) p.resolve({ error: Object.assign(new Error(o.error.message), { code: o.error.code }), written: !!o.written });
        else p.resolve({ replaced: o.replaced ?? 0 });
      });
      this.send();
    });
    const fail = (e: Error) => {
      if (this.worker !== w) return;
      this.worker = undefined;
      const lost = [...(this.inFlight ?? []), ...this.queue];
      this.inFlight = undefined;
      this.queue = [];
      for (const p of lost) p.reject(e);
    };
    w.on('error', fail);
    w.on('exit', (code) => fail(new Error(`the small-object writer exited (${code})`)));
    this.worker = w;
    return w;
  }

  private send(): void {
    if (this.inFlight) return;
    if (!this.queue.length) {
      this.worker?.unref(); // idle: never keep the process alive
      return;
    }
    const batch = this.queue.splice(0, this.maxBatch);
    this.inFlight = batch;
    const w = this.start();
    w.ref();
    w.postMessage({ id: ++this.batchId, sync: this.sync, items: batch.map((p) => p.item) });
  }
}

const writers = new Map<boolean, SmallWriter>();

/**
 * The process's writer for synced (or unsynced) small objects: one worker thread however many
 * stores there are (a batch may mix objects of several), started on the first small put and
 * never keeping the process alive while idle.
 */
export function smallWriter(sync: boolean): SmallWriter {
  let w = writers.get(sync);
  if (!w) writers.set(sync, (w = new SmallWriter(sync)));
  return w;
}
