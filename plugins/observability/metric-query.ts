import { sql, type Kysely, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { apiError, iso, TaskStopped, WorkerPool, type Svc } from '../../core/kit/area.js';
import { foldPartials, foldPercentiles, type Partial, type Series } from './metric-aggregate.js';
import type { MetricQueryT } from './metric-schemas.js';
import type { tasks as metricTasks } from './metric-tasks.js';
import { MetricOnServer } from './metric-server.js';

/** Queries of one account waiting for a thread (or a connection); one more is 429. */
const MAX_QUEUED_PER_ACCOUNT = 4;

export interface MetricQueryLimits {
  maxBuckets: number;
  maxPercentilePoints: number;
  /** Threads (SQLite) or connections (PostgreSQL) running metric queries at once. */
  threads: number;
  /** A query running longer is stopped (422). */
  timeoutMs: number;
}

type Base = SelectQueryBuilder<any, 'obs_metrics', object>;

/**
 * GET /v1/observability/metrics, off the event loop and fair between accounts: on SQLite the
 * query, and for p50/p95 the sort of every point, run in worker threads reading the gateway's
 * file; on PostgreSQL the server aggregates, percentiles included (percentile_cont), behind a
 * queue with a per-account share and a statement timeout. Only a SQLite database in memory has
 * no file a thread could open: there the query runs on the gateway's connection.
 */
export class MetricQueries {
  private readonly pool?: WorkerPool<typeof metricTasks>;
  private readonly server?: MetricOnServer;
  private readonly file?: string;

  constructor(
    private readonly db: Kysely<any>,
    svc: Pick<Svc, 'dialect' | 'config'>,
    private readonly limits: MetricQueryLimits
  ) {
    const url = svc.config.database.url;
    const file = url.startsWith('sqlite:') ? url.slice('sqlite:'.length) : undefined;
    const shared = { concurrency: limits.threads, perAccount: 1, maxQueuedPerAccount: MAX_QUEUED_PER_ACCOUNT };
    if (svc.dialect === 'postgres') this.server = new MetricOnServer(db, shared, limits.timeoutMs);
    else if (file && file !== ':memory:') {
      this.file = file;
      this.pool = new WorkerPool<typeof metricTasks>({
        name: 'observability-metrics',
        caller: import.meta.url,
        module: 'plugins/observability/metric-tasks',
        ...shared,
        maxMemoryMb: 256,
      });
    }
  }

  async close(): Promise<void> {
    await this.pool?.close();
  }

  async query(accountId: string, q: MetricQueryT, signal?: AbortSignal) {
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
    const bucket = sql<number>`cast((ts - ${from}) / ${stepMs} as bigint)`;
    const base: Base = this.db
      .selectFrom('obs_metrics')
      .where('account_id', '=', accountId)
      .where('name', '=', q.name)
      .where('ts', '>=', from)
      .where('ts', '<', to);
    const series = await this.stoppable(() =>
      q.agg === 'p50' || q.agg === 'p95'
        ? this.percentiles(accountId, base, bucket, q.agg === 'p50' ? 0.5 : 0.95, groupBy, signal)
        : this.partials(accountId, base, bucket, signal).then((rows) =>
            foldPartials(rows, q.agg as Exclude<MetricQueryT['agg'], 'p50' | 'p95'>, groupBy)
          )
    );
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

  private async partials(accountId: string, base: Base, bucket: RawBuilder<number>, signal?: AbortSignal) {
    // Grouped by position: the bucket's parameters would not match twice on PostgreSQL.
    const query = base
      .select([
        bucket.as('bucket'),
        'tags',
        sql<number>`sum(value)`.as('sum'),
        sql<number>`count(*)`.as('n'),
        sql<number>`min(value)`.as('lo'),
        sql<number>`max(value)`.as('hi'),
      ])
      .groupBy([sql.raw('1'), sql.raw('2')]);
    const compiled = query.compile();
    let rows: Record<string, unknown>[];
    if (this.pool)
      rows = await this.run(accountId, 'rows', { sql: compiled.sql, parameters: [...compiled.parameters] }, signal);
    else if (this.server) rows = await this.server.rows(accountId, compiled, signal);
    else rows = await query.execute();
    return rows.map(
      (r): Partial => ({
        bucket: Number(r.bucket),
        tags: String(r.tags),
        sum: Number(r.sum),
        n: Number(r.n),
        lo: Number(r.lo),
        hi: Number(r.hi),
      })
    );
  }

  private async percentiles(
    accountId: string,
    base: Base,
    bucket: RawBuilder<number>,
    q: number,
    groupBy: string[] | undefined,
    signal?: AbortSignal
  ): Promise<Series[]> {
    const cap = this.limits.maxPercentilePoints;
    let series: Series[] | null;
    if (this.server) series = await this.server.percentiles(accountId, base, bucket, cap, q, groupBy, signal);
    else {
      const query = base.select([bucket.as('bucket'), 'tags', 'value']).limit(cap + 1);
      if (this.pool) {
        const c = query.compile();
        const input = { sql: c.sql, parameters: [...c.parameters], cap, q, groupBy };
        series = await this.run(accountId, 'percentiles', input, signal);
      } else {
        const rows = (await query.execute()) as Record<string, unknown>[];
        series =
          rows.length > cap
            ? null
            : foldPercentiles(
                rows.map((r) => ({ bucket: Number(r.bucket), tags: String(r.tags), value: Number(r.value) })),
                q,
                groupBy
              );
      }
    }
    if (!series)
      throw apiError(
        'unprocessable',
        `A percentile reads every point, and this range holds more than ${cap}: narrow it, or use avg/min/max.`
      );
    return series;
  }

  private run<K extends keyof typeof metricTasks & string>(
    accountId: string,
    task: K,
    input: Omit<Parameters<(typeof metricTasks)[K]>[0], 'file'>,
    signal?: AbortSignal
  ): Promise<Awaited<ReturnType<(typeof metricTasks)[K]>>> {
    const full = { ...input, file: this.file! } as Parameters<(typeof metricTasks)[K]>[0];
    return this.pool!.run(accountId, task, full, { timeoutMs: this.limits.timeoutMs, signal });
  }

  /** A query past the timeout (a thread ended, a statement cancelled) or a thread's heap: 422, narrow the range. */
  private async stoppable<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (e) {
      const seconds = this.limits.timeoutMs / 1000;
      if ((e instanceof TaskStopped && e.reason === 'timeout') || (e as { code?: string }).code === '57014')
        throw apiError('unprocessable', `The metric query ran past ${seconds} s and was stopped: narrow from/to.`, {
          param: 'from',
        });
      if (e instanceof TaskStopped && e.reason === 'memory')
        throw apiError('unprocessable', 'The metric query needed more memory than a query may take: narrow from/to.', {
          param: 'from',
        });
      throw e;
    }
  }
}
