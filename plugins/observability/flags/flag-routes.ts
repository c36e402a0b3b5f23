import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { apiError, fieldError, ListQuery, Ok, type ListQueryT } from '../../../core/kit/area.js';
import { definitionOf } from './definition.js';
import { evaluateFlag, TargetingKeyMissing, type Evaluation as EvaluationT } from './evaluate.js';
import {
  EvalQuery,
  Evaluation,
  Flag,
  FlagAuditList,
  FlagCreate,
  FlagDeleteQuery,
  FlagKeyParams,
  FlagList,
  FlagUpdate,
  type FlagCreateT,
  type FlagUpdateT,
} from './flag-schemas.js';
import type { FlagStore } from './flag-store.js';
import type { BrowserAccess } from './public-access.js';

type KeyParams = { Params: { key: string } };

/** Evaluates one flag of an account from memory (a database read only after a change). */
export async function evaluateKey(
  store: FlagStore,
  accountId: string,
  key: string,
  ctx: Record<string, unknown>,
  targetingKey: string | undefined
): Promise<EvaluationT | undefined> {
  const loaded = await store.flags(accountId);
  const flag = loaded.flags.get(key);
  return flag && evaluateFlag(flag, ctx, targetingKey);
}

/** GET /v1/observability/flags/{key} (evaluation) and the flags' CRUD and audit. */
export function registerFlagRoutes(app: FastifyInstance, store: FlagStore, browser: BrowserAccess): void {
  const pub = browser('/v1/observability/flags/:key', 'GET');
  app.get(
    '/v1/observability/flags/:key',
    {
      ...pub,
      config: { ...pub.config, scope: 'observability:read', operation: 'observability.flags.evaluate' },
      schema: {
        summary: 'Evaluate a flag for the context in the query string (distinct_id and attributes)',
        tags: ['observability'],
        params: FlagKeyParams,
        querystring: EvalQuery,
        response: { 200: Evaluation },
      },
    },
    async (req: FastifyRequest<KeyParams & { Querystring: Record<string, string> }>) => {
      const q = req.query;
      try {
        const r = await evaluateKey(store, req.principal!.accountId, req.params.key, q, q.distinct_id);
        if (!r) throw apiError('not_found', `No flag ${req.params.key} in this account.`);
        return r;
      } catch (e) {
        if (e instanceof TargetingKeyMissing) throw fieldError('distinct_id', 'is required', e.message);
        throw e;
      }
    }
  );

  app.get(
    '/v1/observability/flags',
    {
      config: { scope: 'observability:read', operation: 'observability.flags.list' },
      schema: {
        summary: 'Feature flags, newest first',
        tags: ['observability'],
        querystring: ListQuery,
        response: { 200: FlagList },
      },
    },
    async (req: FastifyRequest<{ Querystring: ListQueryT }>) => store.list(req.principal!.accountId, req.query)
  );

  app.post(
    '/v1/observability/flags',
    {
      config: { scope: 'observability', operation: 'observability.flags.create', errors: ['already_exists'] },
      schema: { summary: 'Create a feature flag', tags: ['observability'], body: FlagCreate, response: { 200: Flag } },
    },
    async (req: FastifyRequest<{ Body: FlagCreateT }>) => {
      const p = req.principal!;
      return store.create(p.accountId, p.keyId, definitionOf(req.body.key, req.body));
    }
  );

  app.get(
    '/v1/observability/flags/:key/definition',
    {
      config: { scope: 'observability:read', operation: 'observability.flags.get' },
      schema: {
        summary: "A flag's definition and version",
        tags: ['observability'],
        params: FlagKeyParams,
        response: { 200: Flag },
      },
    },
    async (req: FastifyRequest<KeyParams>) => store.get(req.principal!.accountId, req.params.key)
  );

  app.put(
    '/v1/observability/flags/:key',
    {
      config: { scope: 'observability', operation: 'observability.flags.update', errors: ['conflict'] },
      schema: {
        summary: "Replace a flag's definition; `version` must be the current one",
        tags: ['observability'],
        params: FlagKeyParams,
        body: FlagUpdate,
        response: { 200: Flag },
      },
    },
    async (req: FastifyRequest<KeyParams & { Body: FlagUpdateT }>) => {
      const p = req.principal!;
      const { version, ...body } = req.body;
      return store.update(p.accountId, p.keyId, definitionOf(req.params.key, body), version);
    }
  );

  app.delete(
    '/v1/observability/flags/:key',
    {
      config: { scope: 'observability', operation: 'observability.flags.delete', errors: ['conflict'] },
      schema: {
        summary: 'Delete a flag (with `version`, only if it is still the current one)',
        tags: ['observability'],
        params: FlagKeyParams,
        querystring: FlagDeleteQuery,
        response: { 200: Ok },
      },
    },
    async (req: FastifyRequest<KeyParams & { Querystring: { version?: number } }>, _reply: FastifyReply) => {
      const p = req.principal!;
      await store.delete(p.accountId, p.keyId, req.params.key, req.query.version);
      return { ok: true };
    }
  );

  app.get(
    '/v1/observability/flags/:key/audit',
    {
      config: { scope: 'observability:read', operation: 'observability.flags.audit' },
      schema: {
        summary: "A flag's changes, newest first: who, when, before and after",
        tags: ['observability'],
        params: FlagKeyParams,
        querystring: ListQuery,
        response: { 200: FlagAuditList },
      },
    },
    async (req: FastifyRequest<KeyParams & { Querystring: ListQueryT }>) =>
      store.auditOf(req.principal!.accountId, req.params.key, req.query)
  );
}
