import { sql, type CompiledQuery, type RawBuilder } from 'kysely';
import { apiError, FairQueue, TaskStopped, WorkerPool, type DialectName, type Svc } from '../../core/kit/area.js';
import type { AnalyticsConfigT } from './config.js';
import { funnelSql, type FunnelQuery } from './funnel-query.js';
import type { tasks as queryTasks } from './query-tasks.js';

/**
 * Runs the analysis queries off the event loop, fairly between accounts: on SQLite in worker
 * threads reading the gateway's file, on PostgreSQL in the server (the event loop only waits)
 * behind a queue with a per-account share and a statement timeout. Only a SQLite database in
 * memory (tests, `sqlite::memory:`) has no file a thread could open: there the query runs on the
 * gateway's connection.
 */
export class Analysis {
  private readonly pool?: WorkerPool<typeof queryTasks>;
  private readonly queue?: FairQueue;
  private readonly file?: string;

  constructor(
    private readonly svc: Svc,
    private readonly cfg: AnalyticsConfigT
  ) {
    const url = svc.config.database.url;
    const file = url.startsWith('sqlite:') ? url.slice('sqlite:'.length) : undefined;
    const shared = { concurrency: cfg.query_threads, perAccount: 1, maxQueuedPerAccount: cfg.max_queued_queries };
    if (svc.dialect === 'postgres') this.queue = new FairQueue(shared);
    else if (file && file !== ':memory:') {
      this.file = file;
      this.pool = new WorkerPool<typeof queryTasks>({
        name: 'analytics-queries',
        caller: import.meta.url,
        module: 'plugins/analytics/query-tasks',
        ...shared,
        maxMemoryMb: 256,
      });
    }
  }

  async close(): Promise<void> {
    await this.pool?.close();
  }

  /** The rows of `query` for `accountId`; 422 when it runs past query_timeout_seconds. */
  rows<R>(accountId: string, query: RawBuilder<R>, signal?: AbortSignal): Promise<R[]> {
    const compiled = query.compile(this.svc.db);
    return this.run(
      accountId,
      signal,
      (timeoutMs) =>
        this.pool
          ? (this.pool.run(
              accountId,
              'query',
              { file: this.file!, sql: compiled.sql, parameters: [...compiled.parameters] },
              { timeoutMs, signal }
            ) as Promise<R[]>)
          : undefined,
      compiled
    );
  }

  /**
   * A funnel's rows `{ k, gv, n }`. In a SQLite thread it is scanned in JS over the step events
   * (funnel-scan.ts, several times faster than the SQL's joins: docs/analytics.md, storage); on
   * PostgreSQL and in memory it is funnelSql.
   */
  funnel(dialect: DialectName, q: FunnelQuery, signal?: AbortSignal) {
    const { accountId, steps, from, to, windowMs, groupBy } = q;
    const groupPath = groupBy === undefined ? undefined : `$."${groupBy}"`;
    return this.run(
      accountId,
      signal,
      (timeoutMs) =>
        this.pool?.run(
          accountId,
          'funnel',
          { file: this.file!, accountId, steps, from, to, windowMs, groupPath },
          { timeoutMs, signal }
        ),
      funnelSql(dialect, q).compile(this.svc.db)
    );
  }

  /** `inThread` in a worker when there is a pool, else `compiled` in the database; 422 past the timeout. */
  private async run<R>(
    accountId: string,
    signal: AbortSignal | undefined,
    inThread: (timeoutMs: number) => Promise<R[]> | undefined,
    compiled: CompiledQuery<R>
  ): Promise<R[]> {
    const timeoutMs = this.cfg.query_timeout_seconds * 1000;
    try {
      const threaded = inThread(timeoutMs);
      if (threaded) return await threaded;
      if (this.queue) return await this.queue.add(accountId, () => this.onServer<R>(compiled, timeoutMs), { signal });
      return (await this.svc.db.executeQuery<R>(compiled)).rows;
    } catch (e) {
      if ((e instanceof TaskStopped && e.reason === 'timeout') || (e as { code?: string }).code === '57014')
        throw apiError(
          'unprocessable',
          `The query ran past query_timeout_seconds (${this.cfg.query_timeout_seconds} s): narrow from/to.`,
          { param: 'from' }
        );
      throw e;
    }
  }

  private onServer<R>(compiled: CompiledQuery<R>, timeoutMs: number): Promise<R[]> {
    return this.svc.db.transaction().execute(async (trx) => {
      // SET LOCAL takes no parameters; the number is the config's integer.
      await sql.raw(`set local statement_timeout = ${Math.floor(timeoutMs)}`).execute(trx);
      // The planner takes a materialized CTE for a few rows and joins the steps in nested loops:
      // quadratic in the people, past a minute for 200,000 events. Hash joins take under a second.
      await sql.raw('set local enable_nestloop = off').execute(trx);
      return (await trx.executeQuery<R>(compiled)).rows;
    });
  }
}
