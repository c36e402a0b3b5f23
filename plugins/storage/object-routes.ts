import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  iso,
  apiError,
  type ListedObject,
  type ObjectInfo,
  prefixProblem,
  Ok,
  fieldError,
} from '../../core/kit/area.js';
import { checkKey, type StorageService } from './service.js';
import { presignPost } from './presign-post.js';
import { storagePrice } from './billing.js';
import {
  BucketParams,
  KeyParamsSchema,
  ObjectList,
  ObjectListQuery,
  ObjectMeta,
  PresignBody,
  PresignedUrl,
  type ObjectListQueryT,
  type PresignBodyT,
} from './schemas.js';

export function objectWire(o: ObjectInfo) {
  return { key: o.key, size: o.size, etag: o.etag, content_type: o.content_type, last_modified: iso(o.last_modified) };
}

/** A list item: the content type only where the vendor's listing knows it. */
function listedWire(o: ListedObject) {
  return {
    key: o.key,
    size: o.size,
    etag: o.etag,
    ...(o.content_type === undefined ? {} : { content_type: o.content_type }),
    last_modified: iso(o.last_modified),
  };
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
  throw fieldError('cursor', 'is not valid', 'cursor is not a cursor this gateway handed out.');
}

type KeyParams = { bucket: string; key: string };

/**
 * A route for one object, as the spec writes it: `…/objects/{key}{suffix}`. The key is one
 * path segment, so a key with "/" travels as %2F (what clients do when they encode a path
 * parameter); the router decodes it.
 */
function objectRoute(
  app: FastifyInstance,
  method: 'GET' | 'POST' | 'DELETE',
  suffix: string,
  opts: Record<string, any>,
  handler: (req: FastifyRequest<{ Params: KeyParams; Body: any }>, key: string) => Promise<unknown>
): void {
  app.route({
    method,
    url: `/v1/storage/buckets/:bucket/objects/:key${suffix}`,
    ...opts,
    handler: (req: any) => handler(req, req.params.key),
  });
}

/** Objects: presign and delete (the spec), head and list (what S3 users expect). */
export function registerObjectRoutes(app: FastifyInstance, storage: StorageService): void {
  objectRoute(
    app,
    'POST',
    '/presign',
    {
      config: {
        scope: 'storage',
        operation: 'storage.objects.presign',
        capability: 'storage.object.presign',
        // Downloads through the URLs are metered as bytes served; uploads count in the bucket's storage.
        billing: storagePrice(storage.config, 'served'),
      },
      schema: {
        summary:
          'A presigned URL for one object: PUT to upload, GET to download, POST for a capped browser form upload',
        description:
          'A key with "/" is sent with %2F in this path. The URL (and a POST form) points at the gateway\'s own S3 endpoint (or, with plugins.storage.presign_through: vendor, at an s3 or minio bucket\'s service).',
        tags: ['storage'],
        params: KeyParamsSchema,
        body: PresignBody,
        response: { 200: PresignedUrl },
      },
    },
    async (req, key) => {
      checkKey(key);
      const b = await storage.requireBucket(req.principal!.accountId, req.params.bucket);
      const body = (req.body ?? {}) as PresignBodyT;
      const method = body.method ?? 'PUT';
      const seconds = body.expires_seconds ?? storage.config.presign_default_seconds;
      if (method === 'POST') {
        const p = await presignPost(storage, b, key, seconds);
        return { url: p.url, method, expires_at: iso(p.expiresAt), fields: p.fields, max_bytes: p.maxBytes };
      }
      const r = await storage.presign(b, key, method, seconds);
      return { url: r.url, method, expires_at: iso(r.expiresAt), ...(r.headers ? { headers: r.headers } : {}) };
    }
  );

  objectRoute(
    app,
    'DELETE',
    '',
    {
      config: { scope: 'storage', operation: 'storage.objects.delete', capability: 'storage.object.delete' },
      schema: {
        summary: 'Delete an object (deleting a missing key is not an error, as in S3)',
        tags: ['storage'],
        params: KeyParamsSchema,
        response: { 200: Ok },
      },
    },
    async (req, key) => {
      checkKey(key);
      const b = await storage.requireBucket(req.principal!.accountId, req.params.bucket);
      await storage.deleteObject(b, key);
      return { ok: true };
    }
  );

  objectRoute(
    app,
    'GET',
    '',
    {
      config: { scope: 'storage:read', operation: 'storage.objects.head', capability: 'storage.object.head' },
      schema: {
        summary: "An object's size, ETag, content type and last modification",
        tags: ['storage'],
        params: KeyParamsSchema,
        response: { 200: ObjectMeta },
      },
    },
    async (req, key) => {
      checkKey(key);
      const b = await storage.requireBucket(req.principal!.accountId, req.params.bucket);
      const o = await storage.head(b, key);
      if (!o) throw apiError('not_found', `No object "${key}" in bucket "${b.name}".`, { param: 'key' });
      return objectWire(o);
    }
  );

  app.get(
    '/v1/storage/buckets/:bucket/objects',
    {
      config: { scope: 'storage:read', operation: 'storage.objects.list', capability: 'storage.object.list' },
      schema: {
        summary: 'List objects by prefix, in key order',
        tags: ['storage'],
        params: BucketParams,
        querystring: ObjectListQuery,
        response: { 200: ObjectList },
      },
    },
    async (req: FastifyRequest<{ Params: { bucket: string }; Querystring: ObjectListQueryT }>) => {
      const prefix = req.query.prefix ?? '';
      const problem = prefixProblem(prefix);
      if (problem) throw fieldError('prefix', problem);
      const after = decodeCursor(req.query.cursor);
      const b = await storage.requireBucket(req.principal!.accountId, req.params.bucket);
      const page = await storage.list(b, { prefix, after, limit: req.query.limit });
      return {
        items: page.objects.map(listedWire),
        next_cursor: page.truncated && page.last ? encodeCursor(page.last) : null,
      };
    }
  );
}
