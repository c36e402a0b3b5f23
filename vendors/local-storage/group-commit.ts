import { closeSync, fdatasync, fstatSync, openSync, statSync } from 'node:fs';
import type SQLite from 'better-sqlite3';
import { etagListed, type ConditionFailed, type WriteCondition } from '../../core/kit/vendor.js';

// Changes to an object index (object-index.ts) are committed on the event loop in small
// transactions, and made durable by group commit: the index runs with synchronous = NORMAL,
// under which a commit only writes its frames to the WAL (the page cache: microseconds), and
// one fdatasync of the WAL on libuv's thread pool covers every commit made before it began.
// A change is answered once a sync that covers it has finished, which is what synchronous =
// FULL gives (FULL differs from NORMAL in WAL mode only by syncing the WAL at each commit),
// at one sync for all the puts of a busy moment instead of one each. Checkpoints stay as
// NORMAL makes them (the WAL synced before, the database after), off the loop (checkpointer).
//
// Measured against the earlier design, a writer thread with one transaction a batch: each
// batch's round trip of messages cost the event loop ~100 µs on a 2-vCPU VM, more than the
// SQLite work it moved off the loop (BENCHMARKS.md, `storage`).

/** A change to one object's row: its new state, or its removal, maybe under a condition. */
export type IndexOp =
  | {
      kind: 'put';
      account: string;
      bucket: string;
      key: string;
      size: number;
      etag: string;
      content_type: string;
      last_modified: number;
      version: string;
      data: Buffer | null;
      condition?: WriteCondition;
    }
  | { kind: 'delete'; account: string; bucket: string; key: string; condition?: WriteCondition };

/** The row an op replaced or removed: enough to free a large object's data file. */
export interface Replaced {
  size: number;
  version: string;
  inline: boolean;
}

/** What a change did: the row it replaced or removed, or, for a conditional one, why it was not made. */
export type Applied = { was: Replaced | null; failed?: undefined } | { failed: ConditionFailed['precondition_failed'] };

interface Pending {
  op: IndexOp;
  /** Answered only once a sync covers it (a store with fsync, and a put that did not waive it). */
  sync: boolean;
  done?: Applied;
  resolve(r: Applied): void;
  reject(e: Error): void;
}

/** Whether a conditional change may go ahead against the row as it is (inside the transaction). */
function refused(
  cond: WriteCondition | undefined,
  old: { etag: string } | undefined
): ConditionFailed['precondition_failed'] | undefined {
  if (!cond) return undefined;
  if ('if_none_match' in cond) return old ? 'exists' : undefined;
  if (!old) return 'missing';
  return etagListed(cond.if_match, old.etag) ? undefined : 'etag';
}

export class GroupCommit {
  private queue: Pending[] = [];
  private scheduled = false;
  /** Committed, waiting for a sync that began after their commit. */
  private committed: Pending[] = [];
  private syncing: Promise<void> | undefined;
  private walFd: number | undefined;
  private walCheckedAt = 0;
  /** Syncs of the WAL so far (a figure for tests and benches: a busy moment shares one). */
  syncs = 0;
  private readonly run: (ops: IndexOp[]) => Applied[];

  constructor(
    db: SQLite.Database,
    private readonly walFile: string,
    private readonly durable: boolean
  ) {
    const was = db.prepare<[string, string, string], { size: number; version: string; etag: string; inline: number }>(
      'SELECT size, version, etag, data IS NOT NULL AS inline FROM objects WHERE account = ? AND bucket = ? AND key = ?'
    );
    const put = db.prepare(
      'INSERT OR REPLACE INTO objects (account, bucket, key, size, etag, content_type, last_modified, version, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)'
    );
    const del = db.prepare('DELETE FROM objects WHERE account = ? AND bucket = ? AND key = ?');
    const tx = db.transaction((ops: IndexOp[]) =>
      ops.map((op): Applied => {
        const old = was.get(op.account, op.bucket, op.key);
        // A conditional write is checked against the row as it is inside this transaction: atomic.
        const failed = refused(op.condition, old);
        if (failed) return { failed };
        if (op.kind === 'put')
          put.run(
            op.account,
            op.bucket,
            op.key,
            op.size,
            op.etag,
            op.content_type,
            op.last_modified,
            op.version,
            op.data
          );
        else if (old) del.run(op.account, op.bucket, op.key);
        return { was: old ? { size: old.size, version: old.version, inline: old.inline === 1 } : null };
      })
    );
    this.run = (ops) => tx.immediate(ops);
  }

  /**
   * Commit `op` with this turn of the event loop's others; resolves once it is durable, or
   * once it is committed when `sync` is false (the WAL is then synced by a later change's sync
   * or checkpoint).
   */
  apply(op: IndexOp, sync = true): Promise<Applied> {
    return new Promise((resolve, reject) => {
      this.queue.push({ op, sync: sync && this.durable, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.commit());
      }
    });
  }

  private commit(): void {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    if (!batch.length) return;
    let done: Applied[];
    try {
      done = this.run(batch.map((p) => p.op));
    } catch (e) {
      for (const p of batch) p.reject(e as Error);
      return;
    }
    let waiting = false;
    for (const [i, p] of batch.entries()) {
      if (!p.sync) p.resolve(done[i]);
      else {
        p.done = done[i];
        this.committed.push(p);
        waiting = true;
      }
    }
    if (waiting && !this.syncing) this.syncing = this.syncLoop();
  }

  /** Sync the WAL until no commit waits: each sync covers the commits made before it began. */
  private async syncLoop(): Promise<void> {
    while (this.committed.length) {
      const covered = this.committed;
      this.committed = [];
      try {
        const fd = this.wal();
        this.syncs++;
        await new Promise<void>((resolve, reject) => fdatasync(fd, (e) => (e ? reject(e) : resolve())));
        for (const p of covered) p.resolve(p.done!);
      } catch (e) {
        // Committed but maybe not on disk: the caller is told the write failed, as with any failed sync.
        for (const p of covered) p.reject(e as Error);
      }
    }
    this.syncing = undefined;
  }

  /**
   * The WAL's descriptor, opened again if the file was replaced (a new inode) since. SQLite
   * keeps the WAL while this connection is open, so that is checked once a second, not at
   * every sync (a stat and an fstat each).
   */
  private wal(): number {
    const now = Date.now();
    if (this.walFd !== undefined && now < this.walCheckedAt + 1000) return this.walFd;
    this.walCheckedAt = now;
    if (this.walFd !== undefined) {
      try {
        if (statSync(this.walFile).ino === fstatSync(this.walFd).ino) return this.walFd;
      } catch {
        // gone: open it again below
      }
      closeSync(this.walFd);
      this.walFd = undefined;
    }
    this.walFd = openSync(this.walFile, 'r');
    return this.walFd;
  }

  /** Wait for what is queued and syncing, then let go of the WAL. */
  async close(): Promise<void> {
    while (this.queue.length || this.scheduled || this.syncing) {
      if (this.syncing) await this.syncing;
      else await new Promise((r) => setImmediate(r));
    }
    if (this.walFd !== undefined) closeSync(this.walFd);
    this.walFd = undefined;
  }
}
