// What the analytics area runs in its worker threads (core/isolation/worker-pool.ts) on SQLite: a
// funnel or cohort query over the events, on a read-only connection of the thread's own to the
// gateway's file (WAL lets it read beside the writer). better-sqlite3 runs a statement on the
// thread that calls it, so on the gateway's connection such a query would hold the event loop
// for as long as it runs. Loaded by path in the thread; the area imports only its types.

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

export const tasks = {
  /** The rows of one SELECT, with its parameters as Kysely compiled them. */
  async query(i: { file: string; sql: string; parameters: unknown[] }): Promise<Record<string, unknown>[]> {
    const db = await open(i.file);
    return db.prepare(i.sql).all(...i.parameters) as Record<string, unknown>[];
  },
};
