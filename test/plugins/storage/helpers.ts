import { createServer } from 'node:net';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { S3Client } from '@aws-sdk/client-s3';
import { makeApp, activate, type Activated } from '../../helpers/app.js';
import type { Tap } from '../../helpers/tap.js';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * Which vendor the storage suites run on: `local-storage` (default), or with
 * SVC_TEST_STORAGE=s3 the s3 adapter pointed at a second gateway's S3 endpoint, so the same
 * tests drive the AWS SDK on one side and the gateway's endpoint on the other.
 */
export const STORAGE_VENDOR = process.env.SVC_TEST_STORAGE === 's3' ? 's3' : 'local-storage';

async function listenOn(t: Tap, overrides: Record<string, any>): Promise<{ app: FastifyInstance; base: string; dir: string }> {
  // The port is known before the app (its public_url names it), so another process may take it
  // in between (seen once in CI: EADDRINUSE): then try another. The app left behind closes at teardown.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const { app, dir } = await makeApp(t, { ...overrides, server: { ...(overrides.server ?? {}), public_url: base } });
    try {
      await app.listen({ host: '127.0.0.1', port });
      return { app, base, dir };
    } catch (e) {
      if ((e as { code?: string }).code !== 'EADDRINUSE' || attempt >= 5) throw e;
    }
  }
}

/**
 * A gateway listening on loopback whose public_url is its real address, so the presigned
 * URLs it hands out work with plain fetch and the AWS SDK.
 */
export async function listeningApp(t: Tap, overrides: Record<string, any> = {}): Promise<{ app: FastifyInstance; base: string; dir: string }> {
  if (STORAGE_VENDOR !== 's3' || overrides.vendors) return listenOn(t, overrides);
  return s3BackedApp(t, overrides);
}

/**
 * A gateway whose only storage vendor is the s3 adapter, pointed at a second gateway's S3
 * endpoint (`backing`, bucket `backing`, prefix `suite/`).
 */
export async function s3BackedApp(t: Tap, overrides: Record<string, any> = {}): Promise<{ app: FastifyInstance; base: string; dir: string; backing: string }> {
  const backing = await listenOn(t, { plugins: { storage: { tier_caps: {} } } });
  const owner = await activate(backing.app);
  await createBucket(backing.app, owner, 'backing');
  const c = await s3Credentials(backing.app, owner);
  const front = await listenOn(t, {
    ...overrides,
    vendors: [{ id: 's3', use: 's3', config: {
      endpoint: c.endpoint, region: c.region, bucket: 'backing', prefix: 'suite/', force_path_style: true,
      access_key_id: c.access_key_id, secret_access_key: c.secret_access_key,
    } }],
  });
  return { ...front, backing: backing.base };
}

export async function createBucket(app: FastifyInstance, who: Activated, bucket: string, extra: Record<string, unknown> = {}) {
  const res = await app.inject({ method: 'POST', url: '/v1/storage/buckets', headers: who.auth, payload: { bucket, ...extra } });
  if (res.statusCode !== 200) throw new Error(`create bucket: ${res.statusCode} ${res.body}`);
  return res.json();
}

export async function presign(app: FastifyInstance, who: Activated, bucket: string, key: string, body: Record<string, unknown>) {
  return app.inject({ method: 'POST', url: `/v1/storage/buckets/${bucket}/objects/${encodeURIComponent(key)}/presign`, headers: who.auth, payload: body });
}

export async function s3Credentials(app: FastifyInstance, who: Activated) {
  const res = await app.inject({ method: 'POST', url: '/v1/storage/credentials', headers: who.auth, payload: {} });
  if (res.statusCode !== 200) throw new Error(`credentials: ${res.statusCode} ${res.body}`);
  return res.json() as { access_key_id: string; secret_access_key: string; endpoint: string; region: string };
}

/** An AWS SDK client on the gateway's S3 endpoint with fresh credentials of `who`, destroyed at teardown. */
export async function s3Client(t: Tap, app: FastifyInstance, who: Activated): Promise<S3Client> {
  const c = await s3Credentials(app, who);
  const s3 = new S3Client({ endpoint: c.endpoint, region: c.region, forcePathStyle: true, credentials: { accessKeyId: c.access_key_id, secretAccessKey: c.secret_access_key } });
  t.teardown(() => s3.destroy());
  return s3;
}

/** When a presigned URL expires by its own query: X-Amz-Date (`YYYYMMDDTHHMMSSZ`) + X-Amz-Expires seconds, as an ISO string. */
export function urlExpiry(url: string): string {
  const q = new URL(url).searchParams;
  const m = /^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/.exec(q.get('X-Amz-Date') ?? '');
  if (!m) throw new Error(`no X-Amz-Date in ${url}`);
  return new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]) + Number(q.get('X-Amz-Expires')) * 1000).toISOString();
}

/** GET /v1/storage/usage of `who` (reading it writes this node's pending meter changes). */
export async function storageUsage(app: FastifyInstance, who: Activated): Promise<{ bytes_stored: number; bytes_served: number }> {
  return (await app.inject({ method: 'GET', url: '/v1/storage/usage', headers: who.auth })).json();
}

/** Deterministic pseudo-random bytes, generated as they are read: nothing held in memory. */
export function generated(size: number, seed = 1, chunk = 1 << 20): Readable {
  let sent = 0;
  let x = seed >>> 0 || 1;
  return new Readable({
    read() {
      if (sent >= size) return this.push(null);
      const n = Math.min(chunk, size - sent);
      const buf = Buffer.allocUnsafe(n);
      for (let i = 0; i < n; i += 4) {
        x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
        if (i + 4 <= n) buf.writeUInt32LE(x, i);
        else for (let j = i; j < n; j++) buf[j] = (x >>> ((j - i) * 8)) & 0xff;
      }
      sent += n;
      this.push(buf);
    },
  });
}

export async function sha256Of(stream: AsyncIterable<Uint8Array>): Promise<{ hash: string; size: number }> {
  const h = createHash('sha256');
  let size = 0;
  for await (const c of stream) {
    h.update(c);
    size += c.length;
  }
  return { hash: h.digest('hex'), size };
}

/** The error an SDK call fails with (the test fails if it succeeds). */
export async function errorOf(p: Promise<unknown>): Promise<Error & { name: string; $metadata: { httpStatusCode?: number } }> {
  try {
    await p;
  } catch (e) {
    return e as any;
  }
  throw new Error('expected the call to fail');
}

export { activate };
