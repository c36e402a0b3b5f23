import { createServer } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { activate, makeApp } from './app.js';
import { createBucket, s3Credentials } from './storage-api.js';
import type { Tap } from './tap.js';

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

async function listenOn(
  t: Tap,
  overrides: Record<string, any>
): Promise<{ app: FastifyInstance; base: string; dir: string }> {
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
export async function listeningApp(
  t: Tap,
  overrides: Record<string, any> = {}
): Promise<{ app: FastifyInstance; base: string; dir: string }> {
  if (STORAGE_VENDOR !== 's3' || overrides.vendors) return listenOn(t, overrides);
  return s3BackedApp(t, overrides);
}

/**
 * A gateway whose only storage vendor is the s3 adapter, pointed at a second gateway's S3
 * endpoint (`backing`, bucket `backing`, prefix `suite/`).
 */
export async function s3BackedApp(
  t: Tap,
  overrides: Record<string, any> = {}
): Promise<{ app: FastifyInstance; base: string; dir: string; backing: string }> {
  const backing = await listenOn(t, { plugins: { storage: { tier_caps: {} } } });
  const owner = await activate(backing.app);
  await createBucket(backing.app, owner, 'backing');
  const c = await s3Credentials(backing.app, owner);
  const front = await listenOn(t, {
    ...overrides,
    vendors: [
      {
        id: 's3',
        use: 's3',
        config: {
          endpoint: c.endpoint,
          region: c.region,
          bucket: 'backing',
          prefix: 'suite/',
          force_path_style: true,
          access_key_id: c.access_key_id,
          secret_access_key: c.secret_access_key,
        },
      },
    ],
  });
  return { ...front, backing: backing.base };
}
