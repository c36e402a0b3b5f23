import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  iso,
  apiError,
  ListQuery,
  decodeCursor,
  pageOf,
  type ListQueryT,
  Ok,
  idempotentTransaction,
} from '../../core/kit/area.js';
import type { BucketRow, StorageService } from './service.js';
import { storagePrice } from './billing.js';
import { Bucket, BucketList, BucketParams, CreateBucketBody, StorageUsage, type CreateBucketBodyT } from './schemas.js';

export function bucketWire(b: BucketRow) {
  return { bucket: b.name, vendor: b.vendor, region: b.region, created_at: iso(b.created_at), acl: b.acl };
}

export function registerBucketRoutes(app: FastifyInstance, storage: StorageService): void {
  app.post(
    '/v1/storage/buckets',
    {
      config: {
        scope: 'storage',
        operation: 'storage.buckets.create',
        capability: 'storage.bucket.create',
        idempotent: true,
        // What a bucket's bytes cost while they are kept.
        billing: storagePrice(storage.config, 'stored'),
      },
      schema: { summary: 'Create a bucket', tags: ['storage'], body: CreateBucketBody, response: { 200: Bucket } },
    },
    async (req: FastifyRequest<{ Body: CreateBucketBodyT }>, reply: FastifyReply) => {
      // The vendor's bucket first (a retry that runs it again makes nothing twice: see
      // openBucket), then its row and the stored answer in one transaction.
      const b = await storage.openBucket(req.principal!.accountId, req.body.bucket, {
        vendor: req.body.vendor,
        region: req.body.region,
        acl: req.body.acl,
      });
      return idempotentTransaction(app.svc, req, reply, async (trx) => {
        await storage.recordBucket(b, trx);
        return bucketWire(b);
      });
    }
  );

  app.get(
    '/v1/storage/buckets',
    {
      config: { scope: 'storage:read', operation: 'storage.buckets.list' },
      schema: {
        summary: "List the account's buckets, newest first",
        tags: ['storage'],
        querystring: ListQuery,
        response: { 200: BucketList },
      },
    },
    async (req: FastifyRequest<{ Querystring: ListQueryT }>) => {
      const rows = await storage.listBuckets(
        req.principal!.accountId,
        req.query.limit + 1,
        decodeCursor(req.query.cursor)
      );
      return pageOf(rows, req.query.limit, (r) => ({ t: r.created_at, id: r.bucket_id }), bucketWire);
    }
  );

  app.delete(
    '/v1/storage/buckets/:bucket',
    {
      config: { scope: 'storage', operation: 'storage.buckets.delete' },
      schema: { summary: 'Delete an empty bucket', tags: ['storage'], params: BucketParams, response: { 200: Ok } },
    },
    async (req: FastifyRequest<{ Params: { bucket: string } }>) => {
      const b = await storage.requireBucket(req.principal!.accountId, req.params.bucket);
      if (!(await storage.deleteBucket(b)))
        throw apiError('conflict', `Bucket "${b.name}" is not empty; delete its objects first.`, { param: 'bucket' });
      return { ok: true };
    }
  );

  app.get(
    '/v1/storage/usage',
    {
      config: { scope: 'storage:read', operation: 'storage.usage' },
      schema: {
        summary: "Bytes stored and served, and the tier's caps",
        tags: ['storage'],
        response: { 200: StorageUsage },
      },
    },
    async (req) => {
      const accountId = req.principal!.accountId;
      const [u, caps] = await Promise.all([storage.usage.get(accountId), storage.usage.caps(accountId)]);
      return {
        tier: caps.tier,
        ...u,
        max_object_bytes: caps.maxObjectBytes,
        max_total_bytes: caps.maxTotalBytes ?? null,
      };
    }
  );
}
