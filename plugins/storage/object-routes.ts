import type { FastifyInstance, FastifyRequest } from 'fastify';
import { iso } from '../../core/clock.js';
import { apiError } from '../../core/errors.js';
import type { ObjectInfo } from './contract.js';
import { prefixProblem } from './names.js';
import { checkKey, type StorageService } from './service.js';
import { BucketParams, ObjectList, ObjectListQuery, ObjectMeta, ObjectParams, Ok, PresignBody, PresignedUrl, type ObjectListQueryT, type PresignBodyT } from './schemas.js';

type ObjectReq<B = unknown> = FastifyRequest<{ Params: { bucket: string; '*': string }; Body: B }>;

export function objectWire(o: ObjectInfo) {
  return { key: o.key, size: o.size, etag: o.etag, content_type: o.content_type, last_modified: iso(o.last_modified) };
}

function encodeCursor(key: string): string {
  return Buffer.from(JSON.stringify([key])).toString('base64url');
}

function decodeCursor(cursor: string | undefined): string | undefined {
  if (!cursor) return undefined;
  try {
    const [key] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (typeof key === 'string') return key;
  } catch {
    /* fall through */
  }
  throw apiError('validation_failed', 'cursor is not a cursor this gateway handed out.', { param: 'cursor', details: { errors: [{ param: 'cursor', message: 'is not valid' }] } });
}

/** Objects: presign and delete (the spec), list and head (what S3 users expect). Keys may contain "/". */
export function registerObjectRoutes(app: FastifyInstance, storage: StorageService): void {
  app.post('/v1/storage/buckets/:bucket/objects/*', {
    config: { scope: 'storage', operation: 'storage.objects.presign', capability: 'storage.object.presign' },
    schema: {
      summary: 'A presigned URL for one object: PUT to upload, GET to download',
      description: 'The path is `/v1/storage/buckets/{bucket}/objects/{key}/presign`; the key may contain "/".',
      tags: ['storage'], params: ObjectParams, body: PresignBody, response: { 200: PresignedUrl },
    },
  }, async (req: ObjectReq<PresignBodyT>) => {
    const path = req.params['*'];
    if (!path.endsWith('/presign')) throw apiError('not_found', `No route POST ${req.url.split('?')[0]}. Presign with POST …/objects/{key}/presign.`);
    const key = path.slice(0, -'/presign'.length);
    checkKey(key);
    const b = await storage.requireBucket(req.principal!.accountId, req.params.bucket);
    const method = req.body?.method ?? 'PUT';
    const r = await storage.presign(b, key, method, req.body?.expires_seconds ?? storage.config.presign_default_seconds);
    return { url: r.url, method, expires_at: iso(r.expiresAt), ...(r.headers ? { headers: r.headers } : {}) };
  });

  app.delete('/v1/storage/buckets/:bucket/objects/*', {
    config: { scope: 'storage', operation: 'storage.objects.delete', capability: 'storage.object.delete' },
    schema: { summary: 'Delete an object (deleting a missing key is not an error, as in S3)', tags: ['storage'], params: ObjectParams, response: { 200: Ok } },
  }, async (req: ObjectReq) => {
    const key = req.params['*'];
    checkKey(key);
    const b = await storage.requireBucket(req.principal!.accountId, req.params.bucket);
    await storage.deleteObject(b, key);
    return { ok: true };
  });

  app.get('/v1/storage/buckets/:bucket/objects/*', {
    config: { scope: 'storage:read', operation: 'storage.objects.head', capability: 'storage.object.head' },
    schema: { summary: "An object's size, ETag, content type and last modification", tags: ['storage'], params: ObjectParams, response: { 200: ObjectMeta } },
  }, async (req: ObjectReq) => {
    const key = req.params['*'];
    checkKey(key);
    const b = await storage.requireBucket(req.principal!.accountId, req.params.bucket);
    const o = await storage.head(b, key);
    if (!o) throw apiError('not_found', `No object "${key}" in bucket "${b.name}".`, { param: 'key' });
    return objectWire(o);
  });

  app.get('/v1/storage/buckets/:bucket/objects', {
    config: { scope: 'storage:read', operation: 'storage.objects.list', capability: 'storage.object.list' },
    schema: { summary: 'List objects by prefix, in key order', tags: ['storage'], params: BucketParams, querystring: ObjectListQuery, response: { 200: ObjectList } },
  }, async (req: FastifyRequest<{ Params: { bucket: string }; Querystring: ObjectListQueryT }>) => {
    const prefix = req.query.prefix ?? '';
    const problem = prefixProblem(prefix);
    if (problem) throw apiError('validation_failed', `prefix ${problem}.`, { param: 'prefix', details: { errors: [{ param: 'prefix', message: problem }] } });
    const after = decodeCursor(req.query.cursor);
    const b = await storage.requireBucket(req.principal!.accountId, req.params.bucket);
    const page = await storage.list(b, { prefix, after, limit: req.query.limit });
    return { items: page.objects.map(objectWire), next_cursor: page.truncated && page.last ? encodeCursor(page.last) : null };
  });
}
