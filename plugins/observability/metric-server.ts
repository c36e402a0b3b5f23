import {
  sql,
  type CompiledQuery,
  type Kysely,
  type RawBuilder,
  type SelectQueryBuilder,
  type Transaction,
} from 'kysely';
import { FairQueue, type FairQueueOptions } from '../../core/kit/area.js';
import { toSeries, type Series } from './metric-aggregate.js';

/**
 * Metric queries on PostgreSQL: the server aggregates, so the event loop only waits; a queue
 * with a per-account share bounds the connections they take, and a statement timeout ends one
 * that runs too long (SQLSTATE 57014). Percentiles are percentile_cont, which interpolates
 * between the closest ranks with the same arithmetic as quantile() in metric-aggregate.ts
 * (lo + (hi - lo) × (q·(n-1) − ⌊q·(n-1)⌋)), so both databases answer the same numbers.
 */
export class MetricOnServer {
  private readonly queue: FairQueue;

  constructor(
    private readonly db: Kysely<any>,
    opts: FairQueueOptions,
    private readonly timeoutMs: number
  ) {
    this.queue = new FairQueue(opts);
  }

  rows(accountId: string, compiled: CompiledQuery, signal?: AbortSignal): Promise<Record<string, unknown>[]> {
    return this.timed(accountId, signal, async (trx) => (await trx.executeQuery(compiled)).rows as any[]);
  }

  /** Series of the q-quantile per bucket; null when the range holds more than `cap` points. */
  percentiles(
    accountId: string,
    base: SelectQueryBuilder<any, 'obs_metrics', object>,
    bucket: RawBuilder<number>,
    cap: number,
    q: number,
    groupBy: string[] | undefined,
    signal?: AbortSignal
  ): Promise<Series[] | null> {
    // A series is keyed by the values of the group_by tags, each once, in the order first named.
    const keys = groupBy ? [...new Set(groupBy)] : undefined;
    const cols = keys
      ? keys.map((k, i) => sql<string | null>`cast(tags as jsonb) ->> ${k}`.as(`g${i}`))
      : [sql<string>`tags`.as('g0')];
    const query = base
      .select([
        bucket.as('bucket'),
        ...cols,
        sql<number>`percentile_cont(cast(${q} as double precision)) within group (order by value)`.as('value'),
      ])
      .groupBy(cols.map((_, i) => sql.raw(String(i + 1)))) // by position, as the partials
      .groupBy(sql.raw(String(cols.length + 1)));
    const counted = this.db
      .selectFrom(
        base
          .select(sql.lit(1).as('one'))
          .limit(cap + 1)
          .as('c')
      )
      .select(sql<number>`count(*)`.as('n'));
    return this.timed(accountId, signal, async (trx) => {
      if (Number((await trx.executeQuery(counted.compile())).rows[0]?.n) > cap) return null;
      const groups = new Map<string, Map<number, number>>();
      for (const r of (await trx.executeQuery(query.compile())).rows as Record<string, unknown>[]) {
        let key = String(r.g0);
        if (keys) {
          const picked: Record<string, string> = {};
          keys.forEach((k, i) => {
            const v = r[`g${i}`];
            if (v !== null && v !== undefined) picked[k] = String(v);
          });
          key = JSON.stringify(picked);
        }
        let buckets = groups.get(key);
        if (!buckets) groups.set(key, (buckets = new Map()));
        buckets.set(Number(r.bucket), Number(r.value));
      }
      return toSeries(groups);
    });
  }

  private timed<T>(accountId: string, signal: AbortSignal | undefined, work: (trx: Transaction<any>) => Promise<T>) {
    return this.queue.add(
      accountId,
      () =>
        this.db.transaction().execute(async (trx) => {
          // SET LOCAL takes no parameters; the number is the config's integer.
          await sql.raw(`set local statement_timeout = ${Math.max(1, Math.floor(this.timeoutMs))}`).execute(trx);
          return work(trx);
        }),
      { signal }
    );
  }
}
