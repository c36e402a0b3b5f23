import { sql, type RawBuilder } from 'kysely';
import type { DialectName } from '../../core/kit/area.js';
import { personEvents, propertyJson } from './funnel-query.js';

export interface CohortQuery {
  accountId: string;
  event: string;
  filter: Record<string, string | number | boolean | null>;
  from: number;
  to: number;
  /** Start of each period after the first; the first starts at `from`. */
  starts: number[];
  /** Length of every period when they are all as long (days, weeks): the period is arithmetic. */
  periodMs?: number;
}

/**
 * Rows `{ k, n }`: people of the cohort (the event in period 0) who did the event in period k.
 * The period of an event is the number of period starts at or before it.
 */
export function cohortSql(dialect: DialectName, q: CohortQuery): RawBuilder<{ k: number; n: number }> {
  const filters = Object.entries(q.filter).map(([name, value]) =>
    dialect === 'postgres'
      ? sql` and ${propertyJson(dialect, name)}::jsonb = ${JSON.stringify(value)}::jsonb`
      : sql` and ${propertyJson(dialect, name)} = ${JSON.stringify(value)}`
  );
  const period = q.periodMs
    ? sql`cast((ts - ${q.from}) / ${q.periodMs} as integer)`
    : q.starts.length
      ? sql.join(
          q.starts.map((s) => sql`(case when ts >= ${s} then 1 else 0 end)`),
          sql` + `
        )
      : sql`0`;
  return sql`with e as materialized (select coalesce(p.person_id, ev.distinct_id) as person, ev.ts
      from ${personEvents(q.accountId, q.from, q.to)} and ev.event = ${q.event}${sql.join(filters, sql``)}),
    c as materialized (select distinct person from e where ts < ${q.starts[0] ?? q.to}),
    pk as materialized (select distinct e.person, ${period} as k from e join c on c.person = e.person)
    select k, count(*) as n from pk group by k`;
}
