import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

// SQLite's WAL is copied back into the database file by a checkpoint, which ends with an
// fsync. The gateway checkpoints on a timer rather than inside whichever commit crosses
// wal_autocheckpoint (open.ts), but a checkpoint on the event loop still stops every request
// for as long as it takes: 2–7 ms a second for a one-connection load, 15–18 ms a second under
// the `ai` bench's load on a 2-vCPU VM (BENCHMARKS.md, `ai`). So once the WAL has grown past a few
// megabytes (a gateway under real load), checkpoints run on a worker thread with a connection
// of its own; a PASSIVE checkpoint from another connection waits for nobody and takes no lock
// a writer needs. An idle or lightly used gateway never starts the thread (it would cost ~10 MB
// of RSS): its checkpoints are small, and run in place.

const SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.driver);
const db = new SQLite(workerData.file, { fileMustExist: true });
parentPort.on('message', (m) => {
  if (m === 'close') { db.close(); parentPort.close(); return; }
  let out;
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)');
    out = { log: r.log, checkpointed: r.checkpointed, busy: r.busy };
  } catch (e) { out = { error: String((e && e.message) || e) }; }
  parentPort.postMessage(out);
});
`;

/**
 * What the checkpointer uses of a better-sqlite3 connection: named here rather than imported, so
 * the vendor kit's types need no better-sqlite3 types (a dev dependency) in a package that uses
 * none of it. A `Database` is one.
 */
export interface CheckpointConnection {
  readonly open: boolean;
  readonly inTransaction: boolean;
  pragma(source: string): unknown;
}

export interface CheckpointResult {
  on: 'main' | 'worker';
  /** Frames in the WAL, and how many of them are now in the database file. */
  log: number;
  checkpointed: number;
}

export interface CheckpointerOptions {
  /** WAL size in bytes past which checkpoints move to the worker (default 4 MiB, SQLite's default autocheckpoint). */
  workerAboveBytes?: number;
  everyMs?: number;
}

export class Checkpointer {
  private worker: Worker | undefined;
  private waiting: ((r: CheckpointResult | undefined) => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  /** The worker failed once (it could not open the file, say): checkpoints stay in place. */
  private failed = false;
  private readonly aboveBytes: number;

  constructor(
    private readonly file: string,
    private readonly conn: CheckpointConnection,
    opts: CheckpointerOptions = {}
  ) {
    this.aboveBytes = opts.workerAboveBytes ?? 4 * 1024 * 1024;
    const every = opts.everyMs ?? 1000;
    if (every > 0) {
      this.timer = setInterval(() => void this.tick(), every);
      this.timer.unref();
    }
  }

  /**
   * One checkpoint: on the worker if it runs (or the WAL has grown enough to start it), else
   * in place. Undefined when there is nothing to do now (closed, a transaction open, the last
   * checkpoint still running) or it failed: a disk error shows on the next commit too, and a
   * timer must not take the process down.
   */
  tick(): Promise<CheckpointResult | undefined> {
    if (this.closed || this.waiting) return Promise.resolve(undefined);
    if (!this.worker && !this.failed && this.walBytes() > this.aboveBytes) this.start();
    if (this.worker) {
      const w = this.worker;
      return new Promise((resolve) => {
        this.waiting = resolve;
        w.ref(); // a checkpoint under way finishes before the process may exit
        w.postMessage('checkpoint');
      });
    }
    try {
      if (!this.conn.open || this.conn.inTransaction) return Promise.resolve(undefined);
      const [r] = this.conn.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number; checkpointed: number }>;
      return Promise.resolve({ on: 'main', log: r.log, checkpointed: r.checkpointed });
    } catch {
      return Promise.resolve(undefined);
    }
  }

  /** Stop the timer and the worker (its connection closed first); the main connection is the caller's. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    const w = this.worker;
    this.worker = undefined;
    if (!w) return;
    const gone = new Promise<void>((resolve) => w.once('exit', () => resolve()));
    w.ref();
    w.postMessage('close');
    // A worker stuck in a checkpoint on a hung disk must not hold the shutdown forever.
    const force = setTimeout(() => void w.terminate(), 5000);
    await gone;
    clearTimeout(force);
  }

  private walBytes(): number {
    try {
      return statSync(`${this.file}-wal`).size;
    } catch {
      return 0;
    }
  }

  private start(): void {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const w = new Worker(SOURCE, { eval: true, workerData: { driver, file: this.file } });
    w.unref();
    w.on('message', (m: { log?: number; checkpointed?: number; error?: string }) => {
      const done = this.waiting;
      this.waiting = undefined;
      w.unref();
      done?.(m.error === undefined ? { on: 'worker', log: m.log!, checkpointed: m.checkpointed! } : undefined);
    });
    const lost = () => {
      // Back to checkpoints in place, for good: a worker that cannot run would fail again.
      if (this.worker === w) {
        this.worker = undefined;
        this.failed = true;
      }
      const done = this.waiting;
      this.waiting = undefined;
      done?.(undefined);
    };
    w.on('error', lost);
    w.on('exit', lost);
    this.worker = w;
  }
}
