import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { iso } from '../../core/clock.js';
import type { StorageService } from './service.js';
import { CreateCredentialBody, CreatedCredential, CredentialList, Ok, type CreateCredentialBodyT } from './schemas.js';

/** S3 access keys for using S3 tools (AWS SDK, aws CLI, rclone) against the gateway directly. */
export function registerCredentialRoutes(app: FastifyInstance, storage: StorageService): void {
  app.post('/v1/storage/credentials', {
    config: { scope: 'storage', operation: 'storage.credentials.create', idempotent: true },
    schema: { summary: 'Create an S3 access key for this account; the secret is returned once', tags: ['storage'], body: CreateCredentialBody, response: { 200: CreatedCredential } },
  }, async (req: FastifyRequest<{ Body: CreateCredentialBodyT }>) => {
    const label = req.body?.label ?? 's3';
    const c = await storage.credentials.create(req.principal!.accountId, 'user', label);
    return { access_key_id: c.accessKeyId, label, created_at: iso(c.createdAt), secret_access_key: c.secret, endpoint: storage.endpoint, region: storage.config.region };
  });

  app.get('/v1/storage/credentials', {
    config: { scope: 'storage:read', operation: 'storage.credentials.list' },
    schema: { summary: "The account's S3 access keys (never their secrets)", tags: ['storage'], response: { 200: CredentialList } },
  }, async (req) => {
    const rows = await storage.credentials.list(req.principal!.accountId);
    return { items: rows.map((r) => ({ access_key_id: r.access_key_id, label: r.label, created_at: iso(r.created_at) })), next_cursor: null };
  });

  app.delete('/v1/storage/credentials/:access_key_id', {
    config: { scope: 'storage', operation: 'storage.credentials.revoke' },
    schema: { summary: 'Revoke an S3 access key at once', tags: ['storage'], params: Type.Object({ access_key_id: Type.String({ minLength: 1, maxLength: 128 }) }), response: { 200: Ok } },
  }, async (req: FastifyRequest<{ Params: { access_key_id: string } }>) => {
    await storage.credentials.revoke(req.principal!.accountId, req.params.access_key_id);
    return { ok: true };
  });
}
