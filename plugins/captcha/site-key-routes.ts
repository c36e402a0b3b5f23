import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  decodeCursor,
  idempotentTransaction,
  iso,
  ListQuery,
  Ok,
  pageOf,
  type ListQueryT,
} from '../../core/kit/area.js';
import {
  SiteKey,
  SiteKeyCreate,
  SiteKeyList,
  SiteKeyParams,
  SiteKeyUpdate,
  type SiteKeyCreateT,
  type SiteKeyT,
  type SiteKeyUpdateT,
} from './schemas.js';
import type { SiteKeyRow, SiteKeyStore } from './site-keys.js';

type IdReq<B = unknown> = FastifyRequest<{ Params: { id: string }; Body: B }>;

/** CRUD of an account's site keys (beyond the spec); secrets go in, never come out. */
export function registerSiteKeyRoutes(app: FastifyInstance, keys: SiteKeyStore): void {
  const wire = (r: SiteKeyRow): SiteKeyT => ({
    site_key_id: r.site_key_id,
    label: r.label,
    allowed_hostnames: r.allowed_hostnames,
    difficulty: r.difficulty,
    expected_action: r.expected_action,
    min_score: r.min_score,
    vendors: Object.fromEntries(
      Object.entries(r.vendors).map(([v, k]) => [v, { site_key: k.site_key, secret_set: true }])
    ),
    challenge_url: `${app.svc.config.server.public_url}/v1/captcha/sites/${r.site_key_id}/challenge`,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  });
  const tags = ['captcha'];

  app.post(
    '/v1/captcha/site-keys',
    {
      config: { scope: 'captcha', idempotent: true, operation: 'captcha.site_keys.create' },
      schema: { summary: 'Create a site key', tags, body: SiteKeyCreate, response: { 200: SiteKey } },
    },
    async (req: FastifyRequest<{ Body: SiteKeyCreateT }>, reply: FastifyReply) =>
      idempotentTransaction(app.svc, req, reply, async (trx) =>
        wire(await keys.create(req.principal!.accountId, req.body, trx))
      )
  );

  app.get(
    '/v1/captcha/site-keys',
    {
      config: { scope: 'captcha:read', operation: 'captcha.site_keys.list' },
      schema: { summary: 'Your site keys, newest first', tags, querystring: ListQuery, response: { 200: SiteKeyList } },
    },
    async (req: FastifyRequest<{ Querystring: ListQueryT }>) => {
      const rows = await keys.list(req.principal!.accountId, req.query.limit + 1, decodeCursor(req.query.cursor));
      return pageOf(rows, req.query.limit, (r) => ({ t: r.created_at, id: r.site_key_id }), wire);
    }
  );

  app.get(
    '/v1/captcha/site-keys/:id',
    {
      config: { scope: 'captcha:read', operation: 'captcha.site_keys.get', errors: ['not_found'] },
      schema: { summary: 'A site key', tags, params: SiteKeyParams, response: { 200: SiteKey } },
    },
    async (req: IdReq) => wire(await keys.get(req.principal!.accountId, req.params.id))
  );

  app.patch(
    '/v1/captcha/site-keys/:id',
    {
      config: { scope: 'captcha', operation: 'captcha.site_keys.update', errors: ['not_found'] },
      schema: {
        summary: "Change a site key's hostnames, difficulty, checks or vendor keys",
        tags,
        params: SiteKeyParams,
        body: SiteKeyUpdate,
        response: { 200: SiteKey },
      },
    },
    async (req: IdReq<SiteKeyUpdateT>) => wire(await keys.update(req.principal!.accountId, req.params.id, req.body))
  );

  app.delete(
    '/v1/captcha/site-keys/:id',
    {
      config: { scope: 'captcha', operation: 'captcha.site_keys.delete', errors: ['not_found'] },
      schema: {
        summary: 'Delete a site key: its widgets stop working',
        tags,
        params: SiteKeyParams,
        response: { 200: Ok },
      },
    },
    async (req: IdReq) => {
      await keys.remove(req.principal!.accountId, req.params.id);
      return { ok: true };
    }
  );
}
