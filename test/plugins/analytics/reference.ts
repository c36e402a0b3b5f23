// A plain in-memory funnel and cohort, written from docs/analytics.md and nothing else, that the
// gateway's SQL answers are checked against over the same generated events.

export interface Ev {
  event: string;
  distinct_id: string;
  ts: number;
  properties: Record<string, unknown>;
}

export function funnelRef(
  events: Ev[],
  personOf: (d: string) => string,
  q: { steps: string[]; from: number; to: number; windowMs: number; groupBy?: string }
) {
  const byPerson = new Map<string, Ev[]>();
  for (const e of events) {
    if (e.ts < q.from || e.ts >= q.to || !q.steps.includes(e.event)) continue;
    const p = personOf(e.distinct_id);
    if (!byPerson.has(p)) byPerson.set(p, []);
    byPerson.get(p)!.push(e);
  }
  const counts = new Map<string | null, number[]>();
  for (const list of byPerson.values()) {
    const firsts = list.filter((e) => e.event === q.steps[0]);
    if (!firsts.length) continue;
    const t1 = Math.min(...firsts.map((e) => e.ts));
    let group: string | null = null;
    if (q.groupBy !== undefined) {
      const vs = firsts
        .filter((e) => e.ts === t1 && q.groupBy! in e.properties)
        .map((e) => JSON.stringify(e.properties[q.groupBy!]));
      const v = vs.sort()[0];
      group = v === undefined || v === 'null' ? null : typeof JSON.parse(v) === 'string' ? JSON.parse(v) : v;
    }
    let reached = 1;
    let prev = t1;
    for (let k = 1; k < q.steps.length; k++) {
      const strict = q.steps.slice(0, k).includes(q.steps[k]!);
      const next = list
        .filter((e) => e.event === q.steps[k] && (strict ? e.ts > prev : e.ts >= prev) && e.ts <= t1 + q.windowMs)
        .map((e) => e.ts);
      if (!next.length) break;
      prev = Math.min(...next);
      reached++;
    }
    if (!counts.has(group))
      counts.set(
        group,
        q.steps.map(() => 0)
      );
    for (let k = 0; k < reached; k++) counts.get(group)![k]!++;
  }
  const steps = (c: number[]) =>
    q.steps.map((event, k) => ({
      event,
      count: c[k]!,
      conversion_pct: c[0] ? Math.round((c[k]! / c[0]) * 10_000) / 100 : 0,
    }));
  const total = q.steps.map((_, k) => [...counts.values()].reduce((n, c) => n + c[k]!, 0));
  return { total: steps(total), groups: new Map([...counts].map(([g, c]) => [g, steps(c)])) };
}

export function cohortRef(
  events: Ev[],
  personOf: (d: string) => string,
  q: { event: string; filter: Record<string, unknown>; bounds: number[] }
) {
  // bounds: the start of each period, then the end of the last one.
  const periodOf = (ts: number) => {
    for (let k = 0; k < q.bounds.length - 1; k++) if (ts >= q.bounds[k]! && ts < q.bounds[k + 1]!) return k;
    return -1;
  };
  const seen = new Map<string, Set<number>>();
  for (const e of events) {
    if (e.event !== q.event) continue;
    if (
      !Object.entries(q.filter).every(
        ([k, v]) => k in e.properties && JSON.stringify(e.properties[k]) === JSON.stringify(v)
      )
    )
      continue;
    const k = periodOf(e.ts);
    if (k < 0) continue;
    const p = personOf(e.distinct_id);
    if (!seen.has(p)) seen.set(p, new Set());
    seen.get(p)!.add(k);
  }
  const cohort = [...seen.values()].filter((s) => s.has(0));
  return q.bounds.slice(0, -1).map((_, k) => cohort.filter((s) => s.has(k)).length);
}
