import { mkdirSync } from 'node:fs';
import { createPrivateFile, PRIVATE_DIR, Checkpointer } from '../../core/kit/vendor.js';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { GroupCommit, type Applied, type IndexOp } from './group-commit.js';
import { importLegacyObjects } from './legacy-import.js';
import type { ObjectRow } from './object-row.js';

// The index of a local store: one row an object, in `<dir>/objects/index.db`, a SQLite file
// of this vendor's own (not the gateway's database, which may be PostgreSQL on another host).
// A row is an object's commit point: a put is visible, whole, once its row is committed, and
// a small object's bytes (up to INLINE_MAX) are in the row itself, so storing one is a row in
// a batched transaction instead of a file of its own. A large object's bytes stay in a data
// file named by its key and version (layout.ts), written and synced before its row commits.
//
// Reads and writes run on the event loop: a point lookup by primary key costs microseconds,
// and a change is a small transaction whose sync is shared with the others of its moment
// (group-commit.ts). The WAL is checkpointed off the loop once it grows (core's checkpointer).

const SCHEMA = `
CREATE TABLE IF NOT EXISTS objects (
  account TEXT NOT NULL,
  bucket TEXT NOT NULL,
  key TEXT NOT NULL,
  size INTEGER NOT NULL,
  etag TEXT NOT NULL,
  content_type TEXT NOT NULL,
  last_modified INTEGER NOT NULL,
  version TEXT NOT NULL,
  data BLOB,
  PRIMARY KEY (account, bucket, key)
);`;

/** user_version of an index whose legacy metadata files (before the index) were imported. */
const CURRENT = 1;

type Listed = Omit<ObjectRow, 'data' | 'version'>;

export class ObjectIndex {
  readonly file: string;
  private db: SQLite.Database | undefined;
  private writer: GroupCommit | undefined;
  private checkpoints: Checkpointer | undefined;
  private stmts:
    | {
        row: SQLite.Statement<[string, string, string], ObjectRow>;
        info: SQLite.Statement<[string, string, string], Listed>;
        any: SQLite.Statement<[string, string], { one: number }>;
        from: SQLite.Statement<[string, string, string, number], Listed>;
        after: SQLite.Statement<[string, string, string, number], Listed>;
      }
    | undefined;

  constructor(
    private readonly root: string,
    private readonly sync: boolean
  ) {
    this.file = join(root, 'index.db');
  }

  /** Open on first use: a gateway that never stores an object never creates the file. */
  private open() {
    if (this.stmts) return this.stmts;
    mkdirSync(this.root, { recursive: true, mode: PRIVATE_DIR });
    createPrivateFile(this.file); // its -wal and -shm take its mode
    const db = new SQLite(this.file);
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('busy_timeout = 5000');
      // Durability comes from the group commit's sync of the WAL, not from each commit (see group-commit.ts).
      db.pragma('synchronous = NORMAL');
      // Checkpoints run on the checkpointer's timer, off the loop once the WAL is large; this
      // only bounds the WAL should the timer fall behind.
      db.pragma('wal_autocheckpoint = 10000');
      db.exec(SCHEMA);
      if ((db.pragma('user_version', { simple: true }) as number) < CURRENT) {
        // Stores written before the index kept each object's metadata in a file of its own.
        importLegacyObjects(this.root, db);
        db.pragma(`user_version = ${CURRENT}`);
      }
    } catch (e) {
      db.close();
      throw e;
    }
    const cols = 'key, size, etag, content_type, last_modified';
    this.db = db;
    this.writer = new GroupCommit(db, `${this.file}-wal`, this.sync);
    this.checkpoints = new Checkpointer(this.file, db);
    this.stmts = {
      row: db.prepare(`SELECT ${cols}, version, data FROM objects WHERE account = ? AND bucket = ? AND key = ?`),
      info: db.prepare(`SELECT ${cols} FROM objects WHERE account = ? AND bucket = ? AND key = ?`),
      any: db.prepare('SELECT 1 AS one FROM objects WHERE account = ? AND bucket = ? LIMIT 1'),
      from: db.prepare(
        `SELECT ${cols} FROM objects WHERE account = ? AND bucket = ? AND key >= ? ORDER BY key LIMIT ?`
      ),
      after: db.prepare(
        `SELECT ${cols} FROM objects WHERE account = ? AND bucket = ? AND key > ? ORDER BY key LIMIT ?`
      ),
    };
    return this.stmts;
  }

  /** An object's row with its inline bytes, if any. */
  row(account: string, bucket: string, key: string): ObjectRow | undefined {
    return this.open().row.get(account, bucket, key);
  }

  /** What a HEAD says of an object: its row without the bytes or the version. */
  info(account: string, bucket: string, key: string): Listed | undefined {
    return this.open().info.get(account, bucket, key);
  }

  hasObjects(account: string, bucket: string): boolean {
    return !!this.open().any.get(account, bucket);
  }

  /** Up to `limit` objects in key order (UTF-8 bytes, as S3 lists) from `key`, inclusive or not. */
  scan(account: string, bucket: string, key: string, inclusive: boolean, limit: number): Listed[] {
    const s = this.open();
    return (inclusive ? s.from : s.after).all(account, bucket, key, limit);
  }

  /**
   * Commit a change (durably when the store syncs and `sync` is not false); the row it replaced
   * or removed, or why a condition refused it.
   */
  apply(op: IndexOp, sync = true): Promise<Applied> {
    this.open();
    return this.writer!.apply(op, sync);
  }

  /** Syncs of the WAL so far (group commit: many changes share one). */
  get syncs(): number {
    return this.writer?.syncs ?? 0;
  }

  async close(): Promise<void> {
    if (!this.db) return;
    const db = this.db;
    await this.writer!.close();
    await this.checkpoints!.close();
    this.db = undefined;
    this.writer = undefined;
    this.checkpoints = undefined;
    this.stmts = undefined;
    db.close();
  }
}
