// A funnel computed in one pass a step over the step events in time order, instead of SQL's
// self-joins: what the SQLite worker threads run (query-tasks.ts). The rows of an event name come
// from the index (account_id, event, ts, distinct_id) already sorted by time, so the earliest event
// that advances a person is the first one the pass meets, and no sort, join or grouping is needed.
// The semantics are docs/analytics.md's, the same as funnelSql's; the tests hold both to them.

/** One row of a step's event name: `[ts, distinct_id]`, with the group value's JSON text third when grouped. */
export type StepRow = [number, string, (string | null)?];

export interface FunnelScan {
  steps: string[];
  windowMs: number;
  grouped: boolean;
  /** The rows of step k's event name in [from, to) of the account, ascending in ts (the group value for k = 0). */
  rowsOf: (event: string, k: number) => Iterable<StepRow>;
  /** The person a distinct id belongs to (itself unless identify merged it). */
  personOf: (distinctId: string) => string;
}

/** Rows `{ k, gv, n }` as funnelSql answers them: people who reached step k (1-based) with group value gv. */
export function scanFunnel(q: FunnelScan): { k: number; gv: string | null; n: number }[] {
  const index = new Map<string, number>();
  let cap = 1024;
  let t1: Float64Array = new Float64Array(cap);
  let prev: Float64Array = new Float64Array(cap);
  let reached: Uint8Array = new Uint8Array(cap);
  const groups: (string | null)[] = [];

  // Step 1: a person enters at their first event; the group is the smallest value among those at t1.
  for (const [ts, distinctId, gv = null] of q.rowsOf(q.steps[0]!, 0)) {
    const person = q.personOf(distinctId);
    const p = index.get(person);
    if (p === undefined) {
      const n = index.size;
      if (n === cap) {
        cap *= 2;
        t1 = grow(t1, new Float64Array(cap));
        prev = grow(prev, new Float64Array(cap));
        reached = grow(reached, new Uint8Array(cap));
      }
      index.set(person, n);
      t1[n] = prev[n] = ts;
      reached[n] = 1;
      groups.push(gv);
    } else if (ts === t1[p] && gv !== null && (groups[p] === null || gv < groups[p]!)) groups[p] = gv;
  }

  for (let k = 1; k < q.steps.length; k++) {
    const strict = q.steps.slice(0, k).includes(q.steps[k]!);
    for (const [ts, distinctId] of q.rowsOf(q.steps[k]!, k)) {
      const p = index.get(q.personOf(distinctId));
      if (p === undefined || reached[p] !== k) continue;
      if ((strict ? ts > prev[p]! : ts >= prev[p]!) && ts <= t1[p]! + q.windowMs) {
        prev[p] = ts;
        reached[p] = k + 1;
      }
    }
  }

  const counts = new Map<string | null, number[]>();
  for (let p = 0; p < index.size; p++) {
    const gv = q.grouped ? groups[p]! : null;
    let c = counts.get(gv);
    if (!c) counts.set(gv, (c = q.steps.map(() => 0)));
    for (let k = 0; k < reached[p]!; k++) c[k]!++;
  }
  const rows: { k: number; gv: string | null; n: number }[] = [];
  for (const [gv, c] of counts) for (let k = 0; k < c.length; k++) if (c[k]) rows.push({ k: k + 1, gv, n: c[k]! });
  return rows;
}

function grow<A extends Float64Array | Uint8Array>(a: A, into: A): A {
  into.set(a);
  return into;
}
