import t from 'tap';
import { Writable } from 'node:stream';
import { loadConfig } from '../../../config/load.js';
import { buildApp } from '../../../core/app.js';
import { createLogger } from '../../../core/logger.js';
import { freshDatabaseUrl } from '../../helpers/app.js';
import { activate } from './helpers.js';
import { createBucket, presign } from '../../helpers/storage-api.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// database-independent: what the request log shows; no row of its own.

// Presigned URLs are bearer credentials for up to 7 days: the request log (info) must not hold one whole.
t.test('request logs show presigned URLs without their signatures', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-presign-log-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const host = '127.0.0.1:9';
  const config = loadConfig({
    object: {
      data_dir: dir,
      database: { url: await freshDatabaseUrl(t, dir) },
      server: { public_url: `http://${host}` },
    },
    env: {},
  });
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      cb();
    },
  });
  const app = await buildApp(config, { logger: createLogger('info', stream) });
  t.teardown(() => app.close());
  await app.ready();
  const a = await activate(app);
  await createBucket(app, a, 'logged');

  const put = new URL((await presign(app, a, 'logged', 'k.txt', { method: 'PUT' })).json().url);
  const get = new URL((await presign(app, a, 'logged', 'k.txt', { method: 'GET' })).json().url);
  const at = (u: URL) => u.pathname + u.search;
  t.equal((await app.inject({ method: 'PUT', url: at(put), headers: { host }, payload: 'hello' })).statusCode, 200);
  t.equal((await app.inject({ method: 'GET', url: at(get), headers: { host } })).statusCode, 200);
  // A Signature Version 2 URL (refused, but logged first) and a session token.
  const v2 =
    '/s3/logged/k.txt?AWSAccessKeyId=AKIDEXAMPLE&Expires=2000000000&Signature=c2VjcmV0LXYyLXNpZ25hdHVyZQ%3D%3D';
  await app.inject({ method: 'GET', url: v2, headers: { host } });
  await app.inject({ method: 'GET', url: `${at(get)}&X-Amz-Security-Token=session-token-secret`, headers: { host } });

  const secrets = [
    put.searchParams.get('X-Amz-Signature')!,
    get.searchParams.get('X-Amz-Signature')!,
    'c2VjcmV0LXYyLXNpZ25hdHVyZQ',
    'session-token-secret',
  ];
  t.same(
    lines.filter((l) => secrets.some((s) => l.includes(s))),
    [],
    'no signature in any log line'
  );
  const urls = lines.map((l) => JSON.parse(l).req?.url).filter(Boolean);
  t.ok(
    urls.some(
      (u: string) =>
        u.startsWith('/s3/logged/k.txt?') && u.includes('X-Amz-Signature=[redacted]') && u.includes('X-Amz-Expires=')
    ),
    'the URL is logged, its signature replaced by a marker, the rest kept'
  );
  t.ok(
    urls.some((u: string) => u.includes('Signature=[redacted]') && u.includes('AWSAccessKeyId=AKIDEXAMPLE')),
    'a V2 signature likewise'
  );
});
