import { sql, type Kysely } from 'kysely';
import { newId } from '../../core/kit/area.js';
import type { MetricPointT } from './metric-schemas.js';

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

/** Metric points: a list is one insert, all or nothing; queries are metric-query.ts's. */
export class MetricStore {
  constructor(private readonly db: Kysely<any>) {}

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
