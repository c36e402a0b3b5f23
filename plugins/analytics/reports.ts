import { fieldError, iso, type DialectName } from '../../core/kit/area.js';
import type { Analysis } from './analysis.js';
import { cohortSql } from './cohort-query.js';
import { parseTime } from './events.js';
import { DEFAULT_WINDOW_SECONDS, propertyName } from './funnel-query.js';
import type { CohortBodyT, CohortResultT, FunnelBodyT, FunnelResultT } from './schemas.js';

/** Periods a cohort may have: a year and more of days, eight years of weeks, 33 of months. */
export const MAX_PERIODS = 400;

function range(from: string, to: string): { from: number; to: number } {
  const f = parseTime(from, 'from');
  const t = parseTime(to, 'to');
  if (t <= f) throw fieldError('to', 'must be after from');
  return { from: f, to: t };
}

const pct = (n: number, first: number) => (first ? Math.round((n / first) * 10_000) / 100 : 0);

function stepsOf(steps: string[], counts: number[]) {
  return steps.map((event, i) => ({
    event,
    count: counts[i] ?? 0,
    conversion_pct: pct(counts[i] ?? 0, counts[0] ?? 0),
  }));
}

/** A group value as the wire shows it: a string property as itself, any other JSON as its text. */
function groupValue(json: string | null): string | null {
  if (json === null || json === 'null') return null;
  const v = JSON.parse(json);
  return typeof v === 'string' ? v : json;
}

export async function funnel(
  analysis: Analysis,
  dialect: DialectName,
  accountId: string,
  b: FunnelBodyT,
  signal?: AbortSignal
): Promise<FunnelResultT> {
  const { from, to } = range(b.from, b.to);
  const groupBy = b.group_by === undefined ? undefined : propertyName(b.group_by, 'group_by');
  const windowMs = (b.window_seconds ?? DEFAULT_WINDOW_SECONDS) * 1000;
  const rows = await analysis.funnel(dialect, { accountId, steps: b.steps, from, to, windowMs, groupBy }, signal);
  const totals = b.steps.map(() => 0);
  const groups = new Map<string | null, number[]>();
  for (const r of rows) {
    const k = Number(r.k) - 1;
    const n = Number(r.n);
    totals[k]! += n;
    const value = groupValue(r.gv);
    let g = groups.get(value);
    if (!g) groups.set(value, (g = b.steps.map(() => 0)));
    g[k]! += n;
  }
  const result: FunnelResultT = { steps: stepsOf(b.steps, totals) };
  if (groupBy !== undefined)
    result.groups = [...groups]
      .sort((x, y) => y[1][0]! - x[1][0]! || String(x[0]).localeCompare(String(y[0])))
      .map(([value, counts]) => ({ value, steps: stepsOf(b.steps, counts) }));
  return result;
}

/** Start of period k after `from`: days and weeks as fixed lengths, months as calendar months (the day clamped). */
export function periodStart(from: number, period: 'day' | 'week' | 'month', k: number): number {
  if (period === 'day') return from + k * 86_400_000;
  if (period === 'week') return from + k * 7 * 86_400_000;
  const d = new Date(from);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth() + k;
  const last = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  return Date.UTC(
    y,
    m,
    Math.min(d.getUTCDate(), last),
    d.getUTCHours(),
    d.getUTCMinutes(),
    d.getUTCSeconds(),
    d.getUTCMilliseconds()
  );
}

export async function cohort(
  analysis: Analysis,
  dialect: DialectName,
  accountId: string,
  b: CohortBodyT,
  signal?: AbortSignal
): Promise<CohortResultT> {
  const { from, to } = range(b.from, b.to);
  const period = b.period ?? 'day';
  const starts: number[] = [];
  for (let k = 1; ; k++) {
    const s = periodStart(from, period, k);
    if (s >= to) break;
    if (k >= MAX_PERIODS) throw fieldError('to', `is more than ${MAX_PERIODS} periods (${period}) after from`);
    starts.push(s);
  }
  const filter = b.definition.filter ?? {};
  for (const name of Object.keys(filter)) propertyName(name, `definition.filter.${name}`);
  const periodMs = period === 'month' ? undefined : periodStart(0, period, 1);
  const rows = await analysis.rows(
    accountId,
    cohortSql(dialect, { accountId, event: b.definition.event, filter, from, to, starts, periodMs }),
    signal
  );
  const sizes = new Map(rows.map((r) => [Number(r.k), Number(r.n)]));
  return {
    buckets: [from, ...starts].map((start, k) => ({ bucket: k, start: iso(start), size: sizes.get(k) ?? 0 })),
  };
}
