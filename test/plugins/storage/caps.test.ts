import t from 'tap';
import { request } from 'node:http';
import { activate } from './helpers.js';
import { listeningApp } from '../../helpers/listening-app.js';
import { createBucket, presign } from '../../helpers/storage-api.js';

// database-independent: caps while bodies stream; the meter's rows are usage.test.ts's, on both.

// Local storage only: uploads through presigned URLs of a remote S3 service do not pass the
// gateway, so its caps and meters see them only on the gateway's own endpoint.
const caps = {
  vendors: [],
  plugins: { storage: { tier_caps: { free: { max_object_bytes: 1000, max_total_bytes: 2500 } } } },
};

function put(
  url: string,
  body: Buffer,
  headers: Record<string, string> = {}
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'PUT', headers }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

t.test('per-tier object and total caps: 413 naming the cap, before or while the body streams', async (t) => {
  const { app } = await listeningApp(t, caps);
  const a = await activate(app);
  await createBucket(app, a, 'capped');
  const url = async (key: string) => (await presign(app, a, 'capped', key, { method: 'PUT' })).json().url as string;

  const big = await put(await url('big'), Buffer.alloc(1001));
  t.equal(big.status, 413);
  t.match(big.body, /<Code>EntityTooLarge<\/Code>/);
  t.match(big.body, /free tier(&apos;|')s object size cap of 1000 bytes/);
  const chunked = await put(await url('chunked'), Buffer.alloc(1001), { 'transfer-encoding': 'chunked' });
  t.equal(chunked.status, 413, 'no declared length: refused as the bytes arrive');

  t.equal((await put(await url('one'), Buffer.alloc(1000))).status, 200);
  t.equal((await put(await url('two'), Buffer.alloc(1000))).status, 200);
  const over = await put(await url('three'), Buffer.alloc(600));
  t.equal(over.status, 413);
  t.match(over.body, /storage cap of 2.4 KiB \(500 bytes left\)/);
  t.equal(
    (await put(await url('one'), Buffer.alloc(900))).status,
    200,
    'replacing an object counts the bytes it frees'
  );

  const usage = (await app.inject({ method: 'GET', url: '/v1/storage/usage', headers: a.auth })).json();
  t.same(usage, { tier: 'free', bytes_stored: 1900, bytes_served: 0, max_object_bytes: 1000, max_total_bytes: 2500 });
  const listed = (
    await app.inject({ method: 'GET', url: '/v1/storage/buckets/capped/objects', headers: a.auth })
  ).json();
  t.same(
    listed.items.map((o: any) => o.key),
    ['one', 'two'],
    'refused uploads left nothing behind'
  );

  const get = (await presign(app, a, 'capped', 'one', { method: 'GET' })).json();
  await (await fetch(get.url)).arrayBuffer();
  await (await fetch(get.url, { headers: { range: 'bytes=0-99' } })).arrayBuffer();
  await app.inject({ method: 'DELETE', url: '/v1/storage/buckets/capped/objects/two', headers: a.auth });
  const after = (await app.inject({ method: 'GET', url: '/v1/storage/usage', headers: a.auth })).json();
  t.equal(after.bytes_served, 1000);
  t.equal(after.bytes_stored, 900);
});
