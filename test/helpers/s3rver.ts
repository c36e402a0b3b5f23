import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const S3rver = createRequire(import.meta.url)('s3rver');

/**
 * s3rver, a real S3-compatible server on loopback with one bucket `backing`, stopped and
 * removed at teardown. Used where the gateway's own endpoint will not do: the minio client
 * needs an endpoint at the host root, and s3rver keeps Content-Disposition with an object.
 */
export async function s3rver(t: { teardown(fn: () => unknown): void }): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-s3rver-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: dir,
    configureBuckets: [{ name: 'backing' }],
  });
  const addr = await server.run();
  t.teardown(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return `http://127.0.0.1:${addr.port}`;
}
