import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  iso,
  ListQuery,
  decodeCursor,
  pageOf,
  type ListQueryT,
  type KeyRow,
  requireLiveKey,
  requireWithin,
  Ok,
  idempotentTransaction,
} from '../../core/kit/area.js';
import { CreateKeyBody, CreatedKey, KeyIdParams, KeyList, RotatedKey, type CreateKeyBodyT } from './schemas.js';

function wire(k: KeyRow) {
  return {
    key_id: k.key_id,
    label: k.label,
    scopes: k.scopes,
    created_at: iso(k.created_at),
    ...(k.expires_at ? { expires_at: iso(k.expires_at) } : {}),
  };
}

/** Project keys: list (the spec), and create, revoke, rotate (the conventions). */
export function registerKeyRoutes(app: FastifyInstance): void {
  app.get(
    '/v1/account/keys',
    {
      config: { scope: 'account:read', operation: 'account.keys.list' },
      schema: {
        summary: "List the project's keys (never their secrets)",
        tags: ['account'],
        querystring: ListQuery,
        response: { 200: KeyList },
      },
    },
    async (req: FastifyRequest<{ Querystring: ListQueryT }>) => {
      const p = req.principal!;
      const rows = await app.svc.keys.list(p.accountId, req.query.limit + 1, decodeCursor(req.query.cursor));
      return pageOf(rows, req.query.limit, (r) => ({ t: r.created_at, id: r.key_id }), wire);
    }
  );

  app.post(
    '/v1/account/keys',
    {
      config: { scope: 'account', operation: 'account.keys.create', idempotent: true },
      schema: {
        summary: 'Create a project key; the secret is returned once',
        tags: ['account'],
        body: CreateKeyBody,
        response: { 200: CreatedKey },
      },
    },
    async (req: FastifyRequest<{ Body: CreateKeyBodyT }>, reply: FastifyReply) => {
      const p = req.principal!;
      const scopes = req.body.scopes ?? ['*'];
      requireLiveKey(p);
      requireWithin(p.scopes, scopes, 'create a key');
      // The key and the answer that carries its secret commit together: a retry never makes a
      // second key whose secret nobody saw.
      return idempotentTransaction(app.svc, req, reply, async (trx) => {
        const { secret, key } = await app.svc.keys.create(p.accountId, p.projectId, req.body.label, scopes, trx);
        return { ...wire(key), secret };
      });
    }
  );

  app.delete(
    '/v1/account/keys/:key_id',
    {
      config: { scope: 'account', operation: 'account.keys.revoke' },
      schema: { summary: 'Revoke a key at once', tags: ['account'], params: KeyIdParams, response: { 200: Ok } },
    },
    async (req: FastifyRequest<{ Params: { key_id: string } }>) => {
      const p = req.principal!;
      requireLiveKey(p);
      await app.svc.keys.revoke(p.accountId, req.params.key_id, p.scopes);
      return { ok: true };
    }
  );

  app.post(
    '/v1/account/keys/:key_id/rotate',
    {
      config: { scope: 'account', operation: 'account.keys.rotate', idempotent: true },
      schema: {
        summary: 'Issue a new secret for a key; the old one keeps working for the grace period',
        tags: ['account'],
        params: KeyIdParams,
        response: { 200: RotatedKey },
      },
    },
    async (req: FastifyRequest<{ Params: { key_id: string } }>, reply: FastifyReply) => {
      const p = req.principal!;
      requireLiveKey(p);
      const grace = app.svc.config.limits.key_rotation_grace_seconds;
      // Idempotent (the `idempotency-key` header): a retry of a rotation whose answer was lost
      // replays the new secret instead of a 409 for a key that now has a successor.
      const answer = await idempotentTransaction(app.svc, req, reply, async (trx) => {
        const r = await app.svc.keys.rotate(p.accountId, req.params.key_id, grace, p.scopes, trx);
        return {
          ...wire(r.key),
          secret: r.secret,
          old_key_id: req.params.key_id,
          old_key_expires_at: iso(r.old_key_expires_at),
        };
      });
      app.svc.keys.invalidateAccount(p.accountId);
      return answer;
    }
  );
}
