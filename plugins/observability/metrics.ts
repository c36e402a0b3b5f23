import { sql, type Kysely } from 'kysely';
import { apiError, iso, newId } from '../../core/kit/area.js';
import { foldPartials, foldPercentiles, type Partial } from './metric-aggregate.js';
import type { MetricPointT, MetricQueryT } from './metric-schemas.js';

/** Tags as stored and compared: keys sorted, so one tag set is one string whatever the order sent. */
export function canonicalTags(tags: Record<string, string> | undefined): string {
  if (!tags) return '{}';
  return JSON.stringify(Object.fromEntries(Object.entries(tags).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
}

export interface Latest {
  name: string;
  tags: string;
  value: number;
  ts: number;
}

/** Metric points: a list is one insert, all or nothing; queries aggregate per bucket in the database. */
export class MetricStore {
  constructor(
    private readonly db: Kysely<any>,
    private readonly limits: { maxBuckets: number; maxPercentilePoints: number }
  ) {}

  async add(accountId: string, points: MetricPointT[]): Promise<void> {
    const now = Date.now();
    const rows = points.map((p) => ({
      point_id: newId('mp'),
      account_id: accountId,
      name: p.name,
      value: p.value,
      tags: canonicalTags(p.tags),
      ts: p.timestamp ? Date.parse(p.timestamp) : now,
    }));
    await this.db.insertInto('obs_metrics').values(rows).execute();
  }

  async query(accountId: string, q: MetricQueryT) {
    const from = Date.parse(q.from);
    const to = Date.parse(q.to);
    if (!(to > from)) throw apiError('validation_failed', '`to` must be after `from`.', { param: 'to' });
    const stepMs = q.step * 1000;
    const buckets = Math.ceil((to - from) / stepMs);
    if (buckets > this.limits.maxBuckets)
      throw apiError(
        'validation_failed',
        `The range holds ${buckets} buckets of ${q.step} s; at most ${this.limits.maxBuckets}: widen step.`,
        { param: 'step' }
      );
    const groupBy = q.group_by
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const bucket = sql<number>`cast((ts - ${from}) / ${stepMs} as bigint)`.as('bucket');
    const base = this.db
      .selectFrom('obs_metrics')
      .where('account_id', '=', accountId)
      .where('name', '=', q.name)
      .where('ts', '>=', from)
      .where('ts', '<', to);
    let series;
    if (q.agg === 'p50' || q.agg === 'p95') {
      const cap = this.limits.maxPercentilePoints;
      const rows = await base
        .select([bucket, 'tags', 'value'])
        .limit(cap + 1)
        .execute();
      if (rows.length > cap)
        throw apiError(
          'unprocessable',
          `A percentile reads every point, and this range holds more than ${cap}: narrow it, or use avg/min/max.`
        );
      series = foldPercentiles(
        rows.map((r: any) => ({ bucket: Number(r.bucket), tags: r.tags, value: Number(r.value) })),
        q.agg === 'p50' ? 0.5 : 0.95,
        groupBy
      );
    } else {
      const rows = await base
        .select([
          bucket,
          'tags',
          sql<number>`sum(value)`.as('sum'),
          sql<number>`count(*)`.as('n'),
          sql<number>`min(value)`.as('lo'),
          sql<number>`max(value)`.as('hi'),
        ])
        .groupBy([sql.raw('1'), sql.raw('2')]) // by position: the bucket's parameters would not match twice on PostgreSQL
        .execute();
      const partials: Partial[] = rows.map((r: any) => ({
        bucket: Number(r.bucket),
        tags: r.tags,
        sum: Number(r.sum),
        n: Number(r.n),
        lo: Number(r.lo),
        hi: Number(r.hi),
      }));
      series = foldPartials(partials, q.agg, groupBy);
    }
    return {
      name: q.name,
      agg: q.agg,
      step: q.step,
      series: series.map((s) => ({
        tags: s.tags,
        points: s.points.map((p) => ({ t: iso(from + p.bucket * stepMs), value: p.value })),
      })),
    };
  }

  /** The newest point of each series measured since `since`, for the Prometheus scrape. */
  async latest(accountId: string, since: number): Promise<Latest[]> {
    const newest = this.db
      .selectFrom('obs_metrics')
      .select(['name', 'tags', sql<number>`max(ts)`.as('ts')])
      .where('account_id', '=', accountId)
      .where('ts', '>=', since)
      .groupBy(['name', 'tags'])
      .as('n');
    const rows = await this.db
      .selectFrom('obs_metrics as m')
      .innerJoin(newest, (j) =>
        j.onRef('m.name', '=', 'n.name').onRef('m.tags', '=', 'n.tags').onRef('m.ts', '=', 'n.ts')
      )
      .select(['m.name', 'm.tags', 'm.value', 'm.ts', 'm.point_id'])
      .where('m.account_id', '=', accountId)
      .orderBy('m.name')
      .orderBy('m.tags')
      .orderBy('m.point_id', 'desc')
      .execute();
    // Two points of one series in the same millisecond: either is the newest; one is kept.
    const seen = new Set<string>();
    const out: Latest[] = [];
    for (const r of rows as any[]) {
      const k = `${r.name}\n${r.tags}`;
      if (seen.has(k)) continue;
      seen.add(k);
      out.push({ name: r.name, tags: r.tags, value: Number(r.value), ts: Number(r.ts) });
    }
    return out;
  }

  async sweep(before: number, limit: number): Promise<number> {
    const old = this.db.selectFrom('obs_metrics').select('point_id').where('ts', '<', before).limit(limit);
    const r = await this.db.deleteFrom('obs_metrics').where('point_id', 'in', old).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
