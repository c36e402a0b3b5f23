import type { FastifyInstance, FastifyRequest } from 'fastify';
import { fieldError, ListQuery, type ListQueryT } from '../../core/kit/area.js';
import type { ObservabilityConfigT } from './config.js';
import {
  ErrorBody,
  ErrorEventList,
  ErrorResult,
  Issue,
  IssueList,
  IssueListQuery,
  IssueParams,
  IssueUpdate,
  type ErrorBodyT,
} from './error-schemas.js';
import { parseStack, stackType } from './fingerprint.js';
import type { IssueStatus, IssueStore } from './issues.js';

type Params = { Params: { issue_id: string } };

/** POST /v1/observability/errors and the issues it groups errors into. */
export function registerErrorRoutes(app: FastifyInstance, cfg: ObservabilityConfigT, issues: IssueStore): void {
  app.post(
    '/v1/observability/errors',
    {
      config: { scope: 'observability:write', operation: 'observability.errors' },
      schema: {
        summary: 'Report an error; it is grouped into an issue by its fingerprint',
        tags: ['observability'],
        body: ErrorBody,
        response: { 200: ErrorResult },
      },
    },
    async (req: FastifyRequest<{ Body: ErrorBodyT }>) => {
      const b = req.body;
      if (b.stack !== undefined && Buffer.byteLength(b.stack) > cfg.max_stack_bytes)
        throw fieldError('stack', `is longer than ${cfg.max_stack_bytes} bytes`);
      const stack = b.stack || undefined;
      const r = await issues.record(req.principal!.accountId, {
        message: b.message,
        code: b.code,
        stack,
        tags: b.tags ?? {},
        frames: stack ? parseStack(stack) : [],
        type: stack ? stackType(stack) : null,
        source: 'api',
      });
      return { ok: true, ...r };
    }
  );

  app.get(
    '/v1/observability/issues',
    {
      config: { scope: 'observability:read', operation: 'observability.issues.list' },
      schema: {
        summary: 'Issues (errors grouped by fingerprint), newest first',
        tags: ['observability'],
        querystring: IssueListQuery,
        response: { 200: IssueList },
      },
    },
    async (req: FastifyRequest<{ Querystring: ListQueryT & { status?: IssueStatus } }>) =>
      issues.list(req.principal!.accountId, req.query)
  );

  app.get(
    '/v1/observability/issues/:issue_id',
    {
      config: { scope: 'observability:read', operation: 'observability.issues.get' },
      schema: {
        summary: 'One issue: counts, first and last seen, status',
        tags: ['observability'],
        params: IssueParams,
        response: { 200: Issue },
      },
    },
    async (req: FastifyRequest<Params>) => issues.get(req.principal!.accountId, req.params.issue_id)
  );

  app.get(
    '/v1/observability/issues/:issue_id/events',
    {
      config: { scope: 'observability:read', operation: 'observability.issues.events' },
      schema: {
        summary: "An issue's error events, newest first",
        tags: ['observability'],
        params: IssueParams,
        querystring: ListQuery,
        response: { 200: ErrorEventList },
      },
    },
    async (req: FastifyRequest<Params & { Querystring: ListQueryT }>) =>
      issues.events(req.principal!.accountId, req.params.issue_id, req.query)
  );

  app.patch(
    '/v1/observability/issues/:issue_id',
    {
      config: { scope: 'observability', operation: 'observability.issues.update' },
      schema: {
        summary: 'Resolve, ignore or reopen an issue',
        tags: ['observability'],
        params: IssueParams,
        body: IssueUpdate,
        response: { 200: Issue },
      },
    },
    async (req: FastifyRequest<Params & { Body: { status: IssueStatus } }>) =>
      issues.setStatus(req.principal!.accountId, req.params.issue_id, req.body.status)
  );
}
