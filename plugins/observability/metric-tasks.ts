import { foldPercentiles, type Series } from './metric-aggregate.js';

// What the observability area runs in its metric worker threads (core/isolation/worker-pool.ts)
// on SQLite: a metric query, on a read-only connection of the thread's own to the gateway's file
// (WAL lets it read beside the writer), and for p50/p95 the sort of every point of the range.
// better-sqlite3 runs a statement on the thread that calls it, and a percentile sorts up to
// max_percentile_points values: on the event loop both held every account's requests. Loaded by
// path in the thread; the area imports only its types.

type Sqlite = typeof import('better-sqlite3');
let lib: Promise<Sqlite> | undefined;
const connections = new Map<string, import('better-sqlite3').Database>();

async function open(file: string) {
  let db = connections.get(file);
  if (!db) {
    lib ??= import('better-sqlite3').then((m) => (m.default ?? m) as unknown as Sqlite);
    const Database = await lib;
    db = new Database(file, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    connections.set(file, db);
  }
  return db;
}

export interface Compiled {
  file: string;
  sql: string;
  parameters: unknown[];
}

export const tasks = {
  /** The rows of one SELECT (the per-bucket partials of sum, avg, min, max, count). */
  async rows(i: Compiled): Promise<Record<string, unknown>[]> {
    const db = await open(i.file);
    return db.prepare(i.sql).all(...i.parameters) as Record<string, unknown>[];
  },

  /**
   * The q-quantile per bucket and series of the points the SELECT reads (bucket, tags, value;
   * at most `cap` + 1 of them); null when there are more than `cap`.
   */
  async percentiles(i: Compiled & { cap: number; q: number; groupBy?: string[] }): Promise<Series[] | null> {
    const db = await open(i.file);
    const rows: { bucket: number; tags: string; value: number }[] = [];
    for (const r of db.prepare(i.sql).iterate(...i.parameters) as Iterable<Record<string, unknown>>) {
      if (rows.length === i.cap) return null;
      rows.push({ bucket: Number(r.bucket), tags: String(r.tags), value: Number(r.value) });
    }
    return foldPercentiles(rows, i.q, i.groupBy);
  },
};
