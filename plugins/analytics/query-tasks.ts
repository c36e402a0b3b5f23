// What the analytics area runs in its worker threads (core/isolation/worker-pool.ts) on SQLite: a
// funnel or cohort query over the events, on a read-only connection of the thread's own to the
// gateway's file (WAL lets it read beside the writer). better-sqlite3 runs a statement on the
// thread that calls it, so on the gateway's connection such a query would hold the event loop
// for as long as it runs. Loaded by path in the thread; the area imports only its types.
import { scanFunnel, type StepRow } from './funnel-scan.js';

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

export interface FunnelTask {
  file: string;
  accountId: string;
  steps: string[];
  from: number;
  to: number;
  windowMs: number;
  /** The JSON path of the group_by property (`$."plan"`), when grouped. */
  groupPath?: string;
}

export const tasks = {
  /** The rows of one SELECT, with its parameters as Kysely compiled them. */
  async query(i: { file: string; sql: string; parameters: unknown[] }): Promise<Record<string, unknown>[]> {
    const db = await open(i.file);
    return db.prepare(i.sql).all(...i.parameters) as Record<string, unknown>[];
  },

  /**
   * A funnel's rows `{ k, gv, n }` (as funnelSql's), scanned in time order per step (funnel-scan.ts):
   * only the step events are read, from the covering index, in one read transaction (one snapshot).
   */
  async funnel(i: FunnelTask): Promise<{ k: number; gv: string | null; n: number }[]> {
    const db = await open(i.file);
    const merged = db
      .prepare('select distinct_id, person_id from analytics_people where account_id = ? and person_id <> distinct_id')
      .raw(true);
    const rows = (grouped: boolean) =>
      db
        .prepare(
          `select ts, distinct_id${grouped ? ', properties -> ?' : ''} from analytics_events
            where account_id = ? and event = ? and ts >= ? and ts < ? order by ts`
        )
        .raw(true);
    const plain = rows(false);
    // Only the first step reads the group value, so only its rows are read from the table beside the index.
    const first = i.groupPath === undefined ? plain : rows(true);
    const group = i.groupPath === undefined ? [] : [i.groupPath];
    return db.transaction(() => {
      const people = new Map(merged.all(i.accountId) as [string, string][]);
      return scanFunnel({
        steps: i.steps,
        windowMs: i.windowMs,
        grouped: i.groupPath !== undefined,
        rowsOf: (event, k) =>
          (k === 0
            ? first.iterate(...group, i.accountId, event, i.from, i.to)
            : plain.iterate(i.accountId, event, i.from, i.to)) as Iterable<StepRow>,
        personOf: (d) => people.get(d) ?? d,
      });
    })();
  },
};
