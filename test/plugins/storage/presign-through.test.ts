import t from 'tap';
import { activate } from './helpers.js';
import { s3BackedApp } from '../../helpers/listening-app.js';
import { createBucket, presign, storageUsage } from '../../helpers/storage-api.js';

// database-independent: where presigned URLs point; the bucket rows are api.test.ts's, on both.

// A bucket on the s3 adapter (here backed by a second gateway's S3 endpoint, as a remote
// service would be): the API's presigned URLs point at this gateway by default, so uploads
// are capped and transfers metered; `presign_through: vendor` hands out the service's own.
const caps = { free: { max_object_bytes: 1000, max_total_bytes: 2500 } };

t.test(
  "presign_through gateway (default): an s3 bucket's URLs go through the gateway, capped and metered",
  async (t) => {
    const { app, base } = await s3BackedApp(t, { plugins: { storage: { tier_caps: caps } } });
    const a = await activate(app);
    await createBucket(app, a, 'remote');
    const url = async (key: string, method: 'PUT' | 'GET') =>
      (await presign(app, a, 'remote', key, { method })).json().url as string;

    const put = await url('ok.bin', 'PUT');
    t.ok(put.startsWith(`${base}/s3/remote/ok.bin?`), `the gateway's endpoint: ${put.slice(0, 60)}`);
    t.equal((await fetch(put, { method: 'PUT', body: Buffer.alloc(800, 1) })).status, 200);

    const big = await fetch(await url('big.bin', 'PUT'), { method: 'PUT', body: Buffer.alloc(1001, 2) });
    t.equal(big.status, 413, "the tier's object cap holds for a remote bucket too");
    t.match(await big.text(), /<Code>EntityTooLarge<\/Code>/);

    const got = await fetch(await url('ok.bin', 'GET'));
    t.equal(got.status, 200);
    t.same(
      Buffer.from(await got.arrayBuffer()),
      Buffer.alloc(800, 1),
      'the bytes came back from the service through the gateway'
    );
    t.match(await storageUsage(app, a), { bytes_stored: 800, bytes_served: 800 }, 'stored and served bytes metered');
    const listed = (
      await app.inject({ method: 'GET', url: '/v1/storage/buckets/remote/objects', headers: a.auth })
    ).json();
    t.same(
      listed.items.map((o: { key: string }) => o.key),
      ['ok.bin'],
      'the refused upload left nothing'
    );
  }
);

t.test("presign_through vendor: the URL is the service's own (the gateway out of the data path)", async (t) => {
  const { app, backing } = await s3BackedApp(t, { plugins: { storage: { presign_through: 'vendor' } } });
  const a = await activate(app);
  await createBucket(app, a, 'remote');
  const put = (await presign(app, a, 'remote', 'direct.bin', { method: 'PUT' })).json().url as string;
  t.ok(put.startsWith(`${backing}/s3/backing/suite/`), `the backing service's endpoint: ${put.slice(0, 70)}`);
  t.equal((await fetch(put, { method: 'PUT', body: Buffer.from('straight to the service') })).status, 200);
  const get = (await presign(app, a, 'remote', 'direct.bin', { method: 'GET' })).json().url as string;
  t.equal(await (await fetch(get)).text(), 'straight to the service');
  t.match(await storageUsage(app, a), { bytes_stored: 0, bytes_served: 0 }, 'not seen by the meters (documented)');
});

t.test(
  'results written to an s3 vendor are served through the gateway too, metered; with vendor, straight from the service',
  async (t) => {
    const through = await s3BackedApp(t);
    const a = await activate(through.app);
    const saved = await through.app.svc.results.save(a.account_id, Buffer.from('a generated result'), {
      contentType: 'text/plain',
      filename: 'out.txt',
    });
    t.ok(
      saved.url.startsWith(`${through.base}/s3/svc-results/${saved.result_id}/out.txt?`),
      `the gateway's endpoint: ${saved.url.slice(0, 70)}`
    );
    const got = await fetch(saved.url);
    t.equal(got.status, 200);
    t.equal(got.headers.get('content-disposition'), `attachment; filename="out.txt"; filename*=UTF-8''out.txt`);
    t.equal(await got.text(), 'a generated result', 'read from the service through the gateway');
    t.match(await storageUsage(through.app, a), { bytes_served: 18 }, 'the download is metered as served');
    const fresh = await through.app.svc.results.url(a.account_id, saved.result_id, 60);
    t.ok(fresh.url.startsWith(`${through.base}/s3/svc-results/`), 'a fresh URL goes through the gateway as well');
    const flipped = fresh.url.replace(
      /X-Amz-Signature=([0-9a-f])/,
      (_, c: string) => `X-Amz-Signature=${c === '0' ? '1' : '0'}`
    );
    t.equal((await fetch(flipped)).status, 403, 'and is signed');
    t.equal((await fetch(fresh.url)).status, 200);
    const b = await activate(through.app);
    await t.rejects(
      through.app.svc.results.url(b.account_id, saved.result_id),
      { code: 'not_found' },
      "another account's result is 404"
    );

    const direct = await s3BackedApp(t, { plugins: { storage: { presign_through: 'vendor' } } });
    const d = await activate(direct.app);
    const kept = await direct.app.svc.results.save(d.account_id, Buffer.from('straight'), {
      contentType: 'text/plain',
    });
    t.ok(kept.url.startsWith(`${direct.backing}/s3/backing/suite/`), `the service's own URL: ${kept.url.slice(0, 70)}`);
    t.equal(await (await fetch(kept.url)).text(), 'straight');
  }
);

t.test('presign_through takes only gateway or vendor', async (t) => {
  await t.rejects(s3BackedApp(t, { plugins: { storage: { presign_through: 'cdn' } } }), /presign_through/);
});
