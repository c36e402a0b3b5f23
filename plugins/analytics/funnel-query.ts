import { sql, type RawBuilder } from 'kysely';
import { fieldError, type DialectName } from '../../core/kit/area.js';

// The SQL of a funnel and a cohort, one text for SQLite and PostgreSQL: it runs where the events
// are (a SQLite worker thread, or the PostgreSQL server), so a query over millions of events never
// holds the gateway's event loop. The semantics are written in docs/analytics.md; the tests check
// them against a plain in-memory computation.

export const DEFAULT_WINDOW_SECONDS = 14 * 86_400;

/** A property named in a query, checked so it can sit in a JSON path. */
export function propertyName(name: string, param: string): string {
  if (/["\\]/.test(name)) throw fieldError(param, 'may not contain " or \\');
  return name;
}

/** The JSON text of a property of `ev.properties` (`"pro"`, `3`, `true`), or NULL when it is absent. */
export function propertyJson(dialect: DialectName, name: string): RawBuilder<string | null> {
  return dialect === 'postgres'
    ? sql`((ev.properties::jsonb -> ${name})::text)`
    : sql`(ev.properties -> ${`$."${name}"`})`;
}

/** Events of the account in [from, to) with their person: identified ids count as their person. */
export function personEvents(accountId: string, from: number, to: number): RawBuilder<unknown> {
  return sql`analytics_events ev left join analytics_people p
    on p.account_id = ev.account_id and p.distinct_id = ev.distinct_id
    where ev.account_id = ${accountId} and ev.ts >= ${from} and ev.ts < ${to}`;
}

export interface FunnelQuery {
  accountId: string;
  steps: string[];
  from: number;
  to: number;
  windowMs: number;
  groupBy?: string;
}

/** Rows `{ k, gv, n }`: people who reached step k (1-based) with the group value gv. */
export function funnelSql(
  dialect: DialectName,
  q: FunnelQuery
): RawBuilder<{ k: number; gv: string | null; n: number }> {
  const names = [...new Set(q.steps)];
  const gv = q.groupBy === undefined ? sql`cast(null as text)` : propertyJson(dialect, q.groupBy);
  const parts: RawBuilder<unknown>[] = [
    sql`e as materialized (select coalesce(p.person_id, ev.distinct_id) as person, ev.event, ev.ts, ${gv} as gv
      from ${personEvents(q.accountId, q.from, q.to)} and ev.event in (${sql.join(names)}))`,
    sql`s0 as materialized (select person, min(ts) as t1 from e where event = ${q.steps[0]} group by person)`,
    // The group of a person is the property on their first step's event (the smallest value of a tie).
    sql`s1 as materialized (select s0.person, s0.t1, s0.t1 as tp, min(e.gv) as gv from s0
      join e on e.person = s0.person and e.event = ${q.steps[0]} and e.ts = s0.t1 group by s0.person, s0.t1)`,
  ];
  for (let k = 1; k < q.steps.length; k++) {
    // An event named by an earlier step has to be later, so one event never counts as two steps.
    const after = q.steps.slice(0, k).includes(q.steps[k]!) ? sql`>` : sql`>=`;
    parts.push(sql`${sql.raw(`s${k + 1}`)} as materialized (select s.person, s.t1, min(e.ts) as tp, s.gv
      from ${sql.raw(`s${k}`)} s join e on e.person = s.person and e.event = ${q.steps[k]}
      and e.ts ${after} s.tp and e.ts <= s.t1 + ${q.windowMs} group by s.person, s.t1, s.gv)`);
  }
  const reached = sql.join(
    q.steps.map((_, k) => sql`select ${sql.lit(k + 1)} as k, gv from ${sql.raw(`s${k + 1}`)}`),
    sql` union all `
  );
  return sql`with ${sql.join(parts)} select k, gv, count(*) as n from (${reached}) x group by k, gv`;
}
