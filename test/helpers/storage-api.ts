import type { FastifyInstance } from 'fastify';
import { S3Client } from '@aws-sdk/client-s3';
import type { Activated } from './app.js';
import type { Tap } from './tap.js';

// Calls to the storage area's API that tests of several areas and vendors make.

export async function createBucket(
  app: FastifyInstance,
  who: Activated,
  bucket: string,
  extra: Record<string, unknown> = {}
) {
  const res = await app.inject({
    method: 'POST',
    url: '/v1/storage/buckets',
    headers: who.auth,
    payload: { bucket, ...extra },
  });
  if (res.statusCode !== 200) throw new Error(`create bucket: ${res.statusCode} ${res.body}`);
  return res.json();
}

export async function presign(
  app: FastifyInstance,
  who: Activated,
  bucket: string,
  key: string,
  body: Record<string, unknown>
) {
  return app.inject({
    method: 'POST',
    url: `/v1/storage/buckets/${bucket}/objects/${encodeURIComponent(key)}/presign`,
    headers: who.auth,
    payload: body,
  });
}

export async function s3Credentials(app: FastifyInstance, who: Activated) {
  const res = await app.inject({ method: 'POST', url: '/v1/storage/credentials', headers: who.auth, payload: {} });
  if (res.statusCode !== 200) throw new Error(`credentials: ${res.statusCode} ${res.body}`);
  return res.json() as { access_key_id: string; secret_access_key: string; endpoint: string; region: string };
}

/** An AWS SDK client on the gateway's S3 endpoint with fresh credentials of `who`, destroyed at teardown. */
export async function s3Client(t: Tap, app: FastifyInstance, who: Activated): Promise<S3Client> {
  return sdkClient(t, await s3Credentials(app, who));
}

/** An AWS SDK client with the credentials POST /v1/storage/credentials answered, destroyed at teardown. */
export function sdkClient(
  t: Tap,
  c: { access_key_id: string; secret_access_key: string; endpoint: string; region: string }
): S3Client {
  const s3 = new S3Client({
    endpoint: c.endpoint,
    region: c.region,
    forcePathStyle: true,
    credentials: { accessKeyId: c.access_key_id, secretAccessKey: c.secret_access_key },
  });
  t.teardown(() => s3.destroy());
  return s3;
}

/** GET /v1/storage/usage of `who` (reading it writes this node's pending meter changes). */
export async function storageUsage(
  app: FastifyInstance,
  who: Activated
): Promise<{ bytes_stored: number; bytes_served: number }> {
  return (await app.inject({ method: 'GET', url: '/v1/storage/usage', headers: who.auth })).json();
}
