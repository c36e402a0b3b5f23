import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import SQLite from 'better-sqlite3';
import { Checkpointer } from '../sqlite/checkpointer.js';
import { lockDatabaseFile, type OwnerLock } from '../sqlite/owner-lock.js';
import { createPrivateFile, PRIVATE_DIR } from '../data-dir.js';

export type DialectName = 'sqlite' | 'postgres';

/** Synchronous statements on the SQLite connection, beside Kysely's use of it. */
export interface SyncSqlite {
  /**
   * False while a Kysely transaction is open on the connection (its uncommitted writes must
   * not be seen or mixed with): then go through Kysely.
   */
  free(): boolean;
  get(sqlText: string, parameters: readonly unknown[]): unknown;
  /** Runs a writing statement; returns the rows it changed. */
  run(sqlText: string, parameters: readonly unknown[]): number;
  /** Runs `fn` in one transaction (BEGIN IMMEDIATE … COMMIT, ROLLBACK if it throws). */
  transaction<T>(fn: () => T): T;
  /**
   * `fn` runs before any statement on the connection (Kysely's too) while no transaction is
   * open: the wallet writes the charges it has queued, so nothing reads around them.
   */
  beforeStatements(fn: () => void): void;
}

export interface Database {
  db: Kysely<any>;
  dialect: DialectName;
  /** PostgreSQL: the schema tables live in (search_path's first); SQLite: undefined. */
  schema?: string;
  /** Close every connection. */
  close(): Promise<void>;
  /**
   * SQLite only: the connection itself, for the statements on every request, which otherwise
   * pay for Kysely's connection mutex and several promises each. Use it only when `free()`.
   */
  sync?: SyncSqlite;
  /**
   * SQLite only: this process owns the file (`owner`: a lock no other gateway can take, or a
   * private `:memory:` database), so state of the file may be kept in its memory.
   */
  owned?: boolean;
}

/**
 * Kysely prepares every query anew; preparing is a good part of a simple query's cost on
 * SQLite, and the gateway runs the same few statements over and over. Statements are reused
 * by SQL text (bounded; the oldest goes first).
 */
function cachingStatements(conn: SQLite.Database, max = 500) {
  const cache = new Map<string, SQLite.Statement>();
  let before: (() => void) | undefined;
  return {
    close: () => {
      before?.(); // what is queued is written before the connection goes
      conn.close();
    },
    sync(): SyncSqlite {
      const tx = conn.transaction((fn: () => unknown) => fn());
      return {
        // Nothing here streams (Kysely's stream() would hold the connection with an open
        // iterator, and better-sqlite3 would refuse these statements meanwhile).
        free: () => !conn.inTransaction,
        get: (q, p) => this.prepare(q).get(...p),
        run: (q, p) => this.prepare(q).run(...p).changes,
        transaction: <T>(fn: () => T) => tx.immediate(fn) as T,
        beforeStatements: (fn) => {
          before = fn;
        },
      };
    },
    prepare(sqlText: string) {
      if (before && !conn.inTransaction) before();
      let st = cache.get(sqlText);
      if (!st) {
        st = conn.prepare(sqlText);
        if (cache.size >= max) cache.delete(cache.keys().next().value!);
        cache.set(sqlText, st);
      }
      return st;
    },
  };
}

/**
 * Open the database named by a URL: `sqlite:PATH` (or `sqlite::memory:`) or
 * `postgres://…`. A `schema` query parameter on a PostgreSQL URL sets the search_path,
 * so several gateways (or test runs) can share one database.
 */
/**
 * SQLite: bytes the WAL file is cut back to once a checkpoint has emptied it. Without it the
 * file stays at its high-water mark (a burst of writes, a retention round) for good.
 */
export const WAL_LIMIT_BYTES = 64 * 1024 * 1024;

export async function openDatabase(
  url: string,
  opts: { poolSize?: number; walLimitBytes?: number; owner?: boolean } = {}
): Promise<Database> {
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length) || ':memory:';
    let lock: OwnerLock | undefined;
    if (file !== ':memory:') {
      mkdirSync(dirname(file), { recursive: true, mode: PRIVATE_DIR });
      // Before anything is opened or migrated: a second gateway stops here (owner-lock.ts).
      if (opts.owner) lock = lockDatabaseFile(file);
      createPrivateFile(file);
    }
    let conn: SQLite.Database;
    try {
      conn = new SQLite(file);
    } catch (e) {
      lock?.release();
      throw e;
    }
    // WAL lets readers run beside the one writer; busy_timeout waits out a writer from a
    // second process (migrate, doctor) instead of failing at once.
    conn.pragma('journal_mode = WAL');
    conn.pragma('synchronous = NORMAL');
    conn.pragma('busy_timeout = 5000');
    conn.pragma('foreign_keys = ON');
    // SQLite checkpoints the WAL inside the commit that crosses wal_autocheckpoint pages
    // (1,000 by default): with the wallet's two commits a metered call, that is a stall of a
    // few ms (copy + fsync) every hundred calls, on whichever request made that commit. A
    // timer checkpoints once a second instead, between requests, on a thread of its own once
    // the load is real (checkpointer.ts); the in-commit checkpoint stays as a backstop at
    // 10,000 pages (40 MB) for a load the timer cannot keep up with.
    conn.pragma('wal_autocheckpoint = 10000');
    conn.pragma(`journal_size_limit = ${Math.floor(opts.walLimitBytes ?? WAL_LIMIT_BYTES)}`);
    const checkpoints = file === ':memory:' ? undefined : new Checkpointer(file, conn);
    const statements = cachingStatements(conn);
    const db = new Kysely<any>({ dialect: new SqliteDialect({ database: statements }) });
    const close = async () => {
      await checkpoints?.close();
      await db.destroy();
      lock?.release();
    };
    return { db, dialect: 'sqlite', close, sync: statements.sync(), owned: opts.owner === true };
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    // Loaded only for PostgreSQL, so a SQLite gateway starts without it.
    const { default: pg } = await import('pg');
    // int8 (bigint) columns hold micro-USD and epoch milliseconds: both far below 2^53,
    // so numbers are safe and spare every caller a string conversion.
    pg.types.setTypeParser(20, (v: string) => Number(v));
    const u = new URL(url);
    const schema = u.searchParams.get('schema');
    u.searchParams.delete('schema');
    if (schema && !/^[a-z_][a-z0-9_]*$/.test(schema))
      throw new Error(`database.url: schema "${schema}" must be a plain lower-case identifier`);
    const pool = new pg.Pool({
      connectionString: u.toString(),
      max: opts.poolSize ?? 10,
      ...(schema ? { options: `-c search_path=${schema}` } : {}),
    });
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
    if (schema) await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
    const current = await sql<{ s: string }>`select current_schema() as s`.execute(db);
    return { db, dialect: 'postgres', schema: current.rows[0]?.s ?? 'public', close: () => db.destroy() };
  }
  throw new Error(`database.url must start with sqlite: or postgres:// (got "${url.replace(/\/\/[^@]*@/, '//***@')}")`);
}
