import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import {
  iso,
  ListQuery,
  decodeCursor,
  pageOf,
  type ListQueryT,
  Ok,
  idempotentTransaction,
} from '../../core/kit/area.js';
import type { CredentialRow } from './credentials.js';
import type { StorageService } from './service.js';
import { CreateCredentialBody, CreatedCredential, CredentialList, type CreateCredentialBodyT } from './schemas.js';

function credentialWire(r: CredentialRow) {
  return { access_key_id: r.access_key_id, label: r.label, created_at: iso(r.created_at) };
}

/** S3 access keys for using S3 tools (AWS SDK, aws CLI, rclone) against the gateway directly. */
export function registerCredentialRoutes(app: FastifyInstance, storage: StorageService): void {
  app.post(
    '/v1/storage/credentials',
    {
      config: { scope: 'storage', operation: 'storage.credentials.create', idempotent: true },
      schema: {
        summary: 'Create an S3 access key for this account; the secret is returned once',
        tags: ['storage'],
        body: CreateCredentialBody,
        response: { 200: CreatedCredential },
      },
    },
    async (req: FastifyRequest<{ Body: CreateCredentialBodyT }>, reply: FastifyReply) => {
      const label = req.body?.label ?? 's3';
      // The credential and the answer that carries its secret commit together.
      return idempotentTransaction(app.svc, req, reply, async (trx) => {
        const c = await storage.credentials.create(req.principal!.accountId, 'user', label, trx);
        return {
          access_key_id: c.accessKeyId,
          label,
          created_at: iso(c.createdAt),
          secret_access_key: c.secret,
          endpoint: storage.endpoint,
          region: storage.config.region,
        };
      });
    }
  );

  app.get(
    '/v1/storage/credentials',
    {
      config: { scope: 'storage:read', operation: 'storage.credentials.list' },
      schema: {
        summary: "The account's S3 access keys (never their secrets), newest first",
        tags: ['storage'],
        querystring: ListQuery,
        response: { 200: CredentialList },
      },
    },
    async (req: FastifyRequest<{ Querystring: ListQueryT }>) => {
      const rows = await storage.credentials.list(
        req.principal!.accountId,
        req.query.limit + 1,
        decodeCursor(req.query.cursor)
      );
      return pageOf(rows, req.query.limit, (r) => ({ t: r.created_at, id: r.access_key_id }), credentialWire);
    }
  );

  app.delete(
    '/v1/storage/credentials/:access_key_id',
    {
      config: { scope: 'storage', operation: 'storage.credentials.revoke' },
      schema: {
        summary: 'Revoke an S3 access key at once',
        tags: ['storage'],
        params: Type.Object({ access_key_id: Type.String({ minLength: 1, maxLength: 128 }) }),
        response: { 200: Ok },
      },
    },
    async (req: FastifyRequest<{ Params: { access_key_id: string } }>) => {
      await storage.credentials.revoke(req.principal!.accountId, req.params.access_key_id);
      return { ok: true };
    }
  );
}
