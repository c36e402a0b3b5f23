import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { ConditionFailed, WriteCondition } from '../../plugins/storage/contract.js';

// Every change to an object index (index.db, see object-index.ts) is made on one worker
// thread, in batches: what arrives while the worker is busy goes in its next batch, and a
// batch is one SQLite transaction a file, so one WAL append and one sync cover every small
// object in it. Per object that is a row written in the page cache; the per-file work it
// replaced (create, write, fdatasync, close and rename a file an object, each sync its own
// journal commit) was what held 1 KiB puts at 2-3 thousand a second (BENCHMARKS.md). On the
// event loop a transaction would stop every request for its sync; here the loop posts one
// message a batch and waits for one answer.
//
// One writer serves every index of the process (a batch may touch several files); it is
// referenced only while a batch is in flight, so it never keeps an idle process alive.

const SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.driver);
const files = new Map();
function refused(cond, old) {
  if (!cond) return undefined;
  if (cond.if_none_match) return old ? 'exists' : undefined;
  if (!old) return 'missing';
  const bare = old.etag.replace(/^"|"$/g, '');
  return cond.if_match.some((e) => e === '*' || e === bare) ? undefined : 'etag';
}
function open(file, sync) {
  let f = files.get(file);
  if (f) return f;
  const db = new SQLite(file, { fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  db.pragma('synchronous = ' + (sync ? 'FULL' : 'NORMAL'));
  const was = db.prepare('SELECT size, version, etag, data IS NOT NULL AS inline FROM objects WHERE account = ? AND bucket = ? AND key = ?');
  const put = db.prepare('INSERT OR REPLACE INTO objects (account, bucket, key, size, etag, content_type, last_modified, version, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)');
  const del = db.prepare('DELETE FROM objects WHERE account = ? AND bucket = ? AND key = ?');
  const run = db.transaction((ops) => ops.map((op) => {
    const old = was.get(op.account, op.bucket, op.key);
    // A conditional write is checked against the row as it is inside this transaction: atomic.
    const failed = refused(op.condition, old);
    if (failed) return { failed };
    if (op.kind === 'put') {
      const data = op.data ? Buffer.from(op.data.buffer, op.data.byteOffset, op.data.byteLength) : null;
      put.run(op.account, op.bucket, op.key, op.size, op.etag, op.content_type, op.last_modified, op.version, data);
    } else if (old) del.run(op.account, op.bucket, op.key);
    return { was: old ? { size: old.size, version: old.version, inline: old.inline === 1 } : null };
  }));
  files.set(file, (f = { db, run }));
  return f;
}
parentPort.on('message', ({ id, items }) => {
  const out = new Array(items.length);
  const groups = new Map();
  const closes = [];
  items.forEach((it, i) => {
    if (it.op.kind === 'close') return closes.push([it.file, i]);
    let g = groups.get(it.file);
    if (!g) groups.set(it.file, (g = { sync: it.sync, ops: [], at: [] }));
    g.ops.push(it.op);
    g.at.push(i);
  });
  for (const [file, g] of groups) {
    try {
      const was = open(file, g.sync).run(g.ops);
      g.at.forEach((i, n) => (out[i] = was[n]));
    } catch (e) {
      for (const i of g.at) out[i] = { error: { code: e.code, message: e.message } };
    }
  }
  // After the batch's changes: a store closes once its own writes have been answered.
  for (const [file, i] of closes) {
    try { files.get(file)?.db.close(); } catch {}
    files.delete(file);
    out[i] = { was: null };
  }
  parentPort.postMessage({ id, out });
});
`;

/** A change to one object's row: its new state, or its removal. */
export type IndexOp =
  | { kind: 'put'; account: string; bucket: string; key: string; size: number; etag: string; content_type: string; last_modified: number; version: string; data: Buffer | null; condition?: WriteCondition }
  | { kind: 'delete'; account: string; bucket: string; key: string; condition?: WriteCondition }
  | { kind: 'close' };

/** The row an op replaced or removed: enough to free a large object's data file. */
export interface Replaced {
  size: number;
  version: string;
  inline: boolean;
}

/** What a change did: the row it replaced or removed, or, for a conditional one, why it was not made. */
export type Applied = { was: Replaced | null; failed?: undefined } | { failed: ConditionFailed['precondition_failed'] };

interface Item {
  file: string;
  sync: boolean;
  op: IndexOp;
}

interface Pending {
  item: Item;
  resolve(r: Applied): void;
  reject(e: Error): void;
}

type Answer = Applied | { error: { code?: string; message: string } };

class IndexWriter {
  private worker: Worker | undefined;
  private queue: Pending[] = [];
  private inFlight: Pending[] | undefined;
  private batchId = 0;
  private scheduled = false;

  constructor(private readonly maxBatch = 256) {}

  /** Apply `op` to the index in `file` with the next batch; resolves once it is committed. */
  apply(file: string, sync: boolean, op: IndexOp): Promise<Applied> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item: { file, sync, op }, resolve, reject });
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
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const w = new Worker(SOURCE, { eval: true, workerData: { driver } });
    w.on('message', (m: { id: number; out: Answer[] }) => {
      const batch = this.inFlight;
      if (!batch || m.id !== this.batchId) return;
      this.inFlight = undefined;
      batch.forEach((p, i) => {
        const a = m.out[i];
        if ('error' in a) p.reject(Object.assign(new Error(`local-storage index: ${a.error.message}`), { code: a.error.code }));
        else p.resolve(a);
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
    w.on('exit', (code) => fail(new Error(`the local-storage index writer exited (${code})`)));
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
    // A Buffer is often a view of a larger pooled ArrayBuffer (a socket's read, Buffer's 8 KiB
    // pool), which a structured clone would copy whole: each object's bytes go in a copy of
    // their own, moved to the worker rather than cloned again.
    const moved: ArrayBuffer[] = [];
    const items = batch.map((p) => {
      const op = p.item.op;
      if (op.kind !== 'put' || !op.data) return p.item;
      const data = new Uint8Array(op.data);
      moved.push(data.buffer);
      return { ...p.item, op: { ...op, data } };
    });
    w.postMessage({ id: ++this.batchId, items }, moved);
  }
}

let writer: IndexWriter | undefined;

/** The process's index writer, started on the first change. */
export function indexWriter(): IndexWriter {
  return (writer ??= new IndexWriter());
}
