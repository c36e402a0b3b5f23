import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  idempotentTransaction,
  iso,
  now as clockNow,
  apiError,
  newId,
  ListQuery,
  Page,
  pageOf,
  type ListQueryT,
  Ok,
  fieldError,
} from '../../core/kit/area.js';
import { attemptsOf, encodePayload, newestFirst, type Deps } from './common.js';
import { checkSchedule, nextSlot } from './cron-schedule.js';
import { enqueueTick } from './cron-jobs.js';
import {
  CronCreateBody,
  CronPatchBody,
  CronRecord,
  CronRun,
  IdParams,
  type CronCreateBodyT,
  type CronPatchBodyT,
} from './schemas.js';

function wire(r: any) {
  return {
    cron_id: r.cron_id,
    name: r.name,
    schedule: r.schedule,
    url: r.url,
    enabled: Number(r.enabled) === 1,
    ...(r.next_run_at != null ? { next_run_at: iso(Number(r.next_run_at)) } : {}),
    timezone: r.timezone,
    retries: Number(r.retries),
    timeout_seconds: Number(r.timeout_seconds),
    ...(r.payload ? { payload: JSON.parse(r.payload) } : {}),
    ...(r.last_run_at != null ? { last_run_at: iso(Number(r.last_run_at)) } : {}),
    created_at: iso(Number(r.created_at)),
  };
}

/** Cron jobs: create and list (the spec), get, change, delete and their runs (beyond it). */
export function registerCron(app: FastifyInstance, d: Deps): void {
  const { svc, cfg } = d;

  const checkTimeout = (v: number | undefined) => {
    if (v !== undefined && v > cfg.cron_max_timeout_seconds)
      throw fieldError(
        'timeout_seconds',
        `must be at most ${cfg.cron_max_timeout_seconds}`,
        `timeout_seconds is at most ${cfg.cron_max_timeout_seconds}.`
      );
  };

  const own = async (accountId: string, id: string) => {
    const row = await svc.db
      .selectFrom('cron_jobs')
      .selectAll()
      .where('cron_id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    if (!row) throw apiError('not_found', `No cron job ${id} in this account.`, { param: 'id' });
    return row;
  };

  app.post(
    '/v1/scheduling/cron',
    {
      config: { scope: 'scheduling', operation: 'scheduling.cron.create', idempotent: true },
      schema: {
        summary: 'Create a cron job that POSTs its payload to a URL on a schedule',
        tags: ['scheduling'],
        body: CronCreateBody,
        response: { 200: CronRecord },
      },
    },
    async (req: FastifyRequest<{ Body: CronCreateBodyT }>, reply: FastifyReply) => {
      const b = req.body;
      const timezone = b.timezone ?? 'UTC';
      checkSchedule(b.schedule, timezone);
      checkTimeout(b.timeout_seconds);
      const payload = b.payload === undefined ? null : encodePayload(b.payload, cfg);
      await svc.egress.check(b.url, 'url');
      const now = clockNow();
      const enabled = b.enabled ?? true;
      const next = enabled ? (nextSlot(b.schedule, timezone, now) ?? null) : null;
      const row = {
        cron_id: newId('cron'),
        account_id: req.principal!.accountId,
        name: b.name,
        schedule: b.schedule,
        timezone,
        url: b.url,
        payload,
        retries: b.retries ?? 3,
        timeout_seconds: b.timeout_seconds ?? cfg.cron_default_timeout_seconds,
        enabled: enabled ? 1 : 0,
        next_run_at: next,
        last_run_at: null,
        created_at: now,
        updated_at: now,
      };
      return idempotentTransaction(svc, req, reply, async (trx) => {
        await trx.insertInto('cron_jobs').values(row).execute();
        if (next !== null) await enqueueTick(svc.jobs, trx, row.cron_id, next);
        return wire(row);
      });
    }
  );

  app.get(
    '/v1/scheduling/cron',
    {
      config: { scope: 'scheduling:read', operation: 'scheduling.cron.list' },
      schema: {
        summary: 'Cron jobs, newest first',
        tags: ['scheduling'],
        querystring: ListQuery,
        response: { 200: Page(CronRecord) },
      },
    },
    async (req: FastifyRequest<{ Querystring: ListQueryT }>) => {
      const rows = await newestFirst(
        svc.db.selectFrom('cron_jobs').selectAll().where('account_id', '=', req.principal!.accountId),
        'cron_id',
        req.query.cursor,
        req.query.limit
      );
      return pageOf(rows, req.query.limit, (r: any) => ({ t: Number(r.created_at), id: r.cron_id }), wire);
    }
  );

  app.get(
    '/v1/scheduling/cron/:id',
    {
      config: { scope: 'scheduling:read', operation: 'scheduling.cron.get' },
      schema: { summary: 'A cron job', tags: ['scheduling'], params: IdParams, response: { 200: CronRecord } },
    },
    async (req: FastifyRequest<{ Params: { id: string } }>) => wire(await own(req.principal!.accountId, req.params.id))
  );

  app.patch(
    '/v1/scheduling/cron/:id',
    {
      config: { scope: 'scheduling', operation: 'scheduling.cron.update' },
      schema: {
        summary: 'Enable, disable or change a cron job',
        tags: ['scheduling'],
        params: IdParams,
        body: CronPatchBody,
        response: { 200: CronRecord },
      },
    },
    async (req: FastifyRequest<{ Params: { id: string }; Body: CronPatchBodyT }>) => {
      const b = req.body;
      const cur = await own(req.principal!.accountId, req.params.id);
      const schedule = b.schedule ?? cur.schedule;
      const timezone = b.timezone ?? cur.timezone;
      if (b.schedule !== undefined || b.timezone !== undefined) checkSchedule(schedule, timezone);
      checkTimeout(b.timeout_seconds);
      const payload = b.payload === undefined ? cur.payload : encodePayload(b.payload, cfg);
      if (b.url !== undefined) await svc.egress.check(b.url, 'url');
      const enabled = b.enabled ?? Number(cur.enabled) === 1;
      const timing = b.schedule !== undefined || b.timezone !== undefined || b.enabled !== undefined;
      const now = clockNow();
      // A changed schedule or state gets a fresh next slot; the old tick finds next_run_at moved and does nothing.
      const next = !enabled ? null : timing ? (nextSlot(schedule, timezone, now) ?? null) : cur.next_run_at;
      const set = {
        name: b.name ?? cur.name,
        schedule,
        timezone,
        url: b.url ?? cur.url,
        payload,
        retries: b.retries ?? cur.retries,
        timeout_seconds: b.timeout_seconds ?? cur.timeout_seconds,
        enabled: enabled ? 1 : 0,
        next_run_at: next,
        updated_at: now,
      };
      await svc.db.transaction().execute(async (trx) => {
        await trx.updateTable('cron_jobs').set(set).where('cron_id', '=', cur.cron_id).execute();
        if (next !== null && next !== undefined) await enqueueTick(svc.jobs, trx, cur.cron_id, Number(next));
      });
      return wire({ ...cur, ...set });
    }
  );

  app.delete(
    '/v1/scheduling/cron/:id',
    {
      config: { scope: 'scheduling', operation: 'scheduling.cron.delete' },
      schema: {
        summary: 'Delete a cron job (its pending tick does nothing)',
        tags: ['scheduling'],
        params: IdParams,
        response: { 200: Ok },
      },
    },
    async (req: FastifyRequest<{ Params: { id: string } }>) => {
      const cur = await own(req.principal!.accountId, req.params.id);
      await svc.db.deleteFrom('cron_jobs').where('cron_id', '=', cur.cron_id).execute();
      return { ok: true };
    }
  );

  app.get(
    '/v1/scheduling/cron/:id/runs',
    {
      config: { scope: 'scheduling:read', operation: 'scheduling.cron.runs' },
      schema: {
        summary: 'Runs of a cron job with every attempt, newest first',
        tags: ['scheduling'],
        params: IdParams,
        querystring: ListQuery,
        response: { 200: Page(CronRun) },
      },
    },
    async (req: FastifyRequest<{ Params: { id: string }; Querystring: ListQueryT }>) => {
      const cron = await own(req.principal!.accountId, req.params.id);
      const rows = await newestFirst(
        svc.db.selectFrom('cron_runs').selectAll().where('cron_id', '=', cron.cron_id),
        'run_id',
        req.query.cursor,
        req.query.limit
      );
      const attempts = await attemptsOf(
        svc.db,
        rows.map((r: any) => r.run_id)
      );
      return pageOf(
        rows,
        req.query.limit,
        (r: any) => ({ t: Number(r.created_at), id: r.run_id }),
        (r: any) => ({
          run_id: r.run_id,
          scheduled_for: iso(Number(r.slot_at)),
          state: r.state,
          ...(r.missed_until != null ? { missed_until: iso(Number(r.missed_until)) } : {}),
          attempts: attempts.get(r.run_id) ?? [],
          created_at: iso(Number(r.created_at)),
        })
      );
    }
  );
}
