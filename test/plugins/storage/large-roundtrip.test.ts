// long-pole: one of the longest files; started first so it does not run alone at the end (scripts/test-files.mjs).
import t from 'tap';
import { activate, generated, sha256Of } from './helpers.js';
import { listeningApp } from '../../helpers/listening-app.js';
import { createBucket, presign } from '../../helpers/storage-api.js';

// database-independent: 100 MiB through local storage; the rows are api.test.ts's, on both.

// The "must show": 100 MiB up with plain fetch through a presigned PUT, down through
// a presigned GET, bytes identical. Generated and hashed as they stream: never in memory.
// (Memory use of the gateway is measured by bench/storage in its own process: in this one,
// undici's fetch buffers an upload body on the client side.)
const SIZE = Number(process.env.RT_MIB ?? 100) * 1024 * 1024;

t.test('100 MiB through presigned PUT and GET with plain fetch', async (t) => {
  const { app } = await listeningApp(t);
  const a = await activate(app);
  await createBucket(app, a, 'big');
  const put = (await presign(app, a, 'big', 'blob.bin', { method: 'PUT', expires_seconds: 600 })).json();
  const up = await fetch(put.url, { method: 'PUT', body: generated(SIZE, 42) as any, duplex: 'half' } as any);
  t.equal(up.status, 200);
  const get = (await presign(app, a, 'big', 'blob.bin', { method: 'GET' })).json();
  const down = await fetch(get.url);
  t.equal(down.status, 200);
  t.equal(Number(down.headers.get('content-length')), SIZE);
  const got = await sha256Of(down.body as any);
  t.same(got, await sha256Of(generated(SIZE, 42)));
});
