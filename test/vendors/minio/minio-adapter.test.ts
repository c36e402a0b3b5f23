import t from 'tap';
import type { Readable } from 'node:stream';
import {
  S3Client,
  PutObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  CreateBucketCommand,
} from '@aws-sdk/client-s3';
import { activate, generated, sha256Of, errorOf, urlExpiry } from '../../plugins/storage/helpers.js';
import { listeningApp } from '../../helpers/listening-app.js';
import { createBucket, presign, s3Credentials } from '../../helpers/storage-api.js';
import { s3rver } from '../../helpers/s3rver.js';

// database-independent: the minio adapter against s3rver; the rows are the storage tests', on both.

// The minio adapter against s3rver, a real S3-compatible server (the minio client needs an
// endpoint at the host root, which the gateway's own /s3 endpoint is not).

t.test('buckets on the minio adapter: presigned URLs at the service, the S3 endpoint proxied through it', async (t) => {
  const endpoint = await s3rver(t);
  const { app } = await listeningApp(t, {
    // The adapter's own presigned URLs (the default hands out the gateway's).
    plugins: { storage: { presign_through: 'vendor' } },
    vendors: [
      {
        id: 'mio',
        use: 'minio',
        config: { endpoint, bucket: 'backing', prefix: 'gw/', access_key_id: 'S3RVER', secret_access_key: 'S3RVER' },
      },
    ],
  });
  const u = await activate(app);
  t.equal((await createBucket(app, u, 'media')).vendor, 'mio');
  const put = (await presign(app, u, 'media', 'clips/a.bin', { method: 'PUT' })).json();
  t.ok(put.url.startsWith(`${endpoint}/backing/gw/${u.account_id}/media/clips/a.bin?`), put.url);
  const size = 1024 * 1024 + 3;
  const up = await fetch(put.url, {
    method: 'PUT',
    body: generated(size, 8) as any,
    duplex: 'half',
    headers: { 'content-length': String(size) },
  } as any);
  t.equal(up.status, 200, await up.clone().text());
  const get = (await presign(app, u, 'media', 'clips/a.bin', { method: 'GET' })).json();
  t.same(
    [put.expires_at, get.expires_at],
    [urlExpiry(put.url), urlExpiry(get.url)],
    "expires_at is the minio-signed URL's own expiry"
  );
  t.same(await sha256Of((await fetch(get.url)).body as any), await sha256Of(generated(size, 8)));
  const head = (
    await app.inject({ method: 'GET', url: '/v1/storage/buckets/media/objects/clips%2Fa.bin', headers: u.auth })
  ).json();
  t.equal(head.size, size);
  t.match(head.etag, /^"[0-9a-f]{32}"$/);
  const listed = (
    await app.inject({ method: 'GET', url: '/v1/storage/buckets/media/objects?prefix=clips/', headers: u.auth })
  ).json();
  t.same(
    listed.items.map((o: any) => [o.key, o.size, o.content_type]),
    [['clips/a.bin', size, undefined]],
    'the listing has no content type: none is made up'
  );
  t.type(head.content_type, 'string', 'a HEAD gives the stored one');

  const c = await s3Credentials(app, u);
  const s3 = new S3Client({
    endpoint: c.endpoint,
    region: c.region,
    forcePathStyle: true,
    credentials: { accessKeyId: c.access_key_id, secretAccessKey: c.secret_access_key },
  });
  t.teardown(() => s3.destroy());
  await s3.send(new CreateBucketCommand({ Bucket: 'via-minio' }));
  await s3.send(
    new PutObjectCommand({ Bucket: 'via-minio', Key: 'x/hello.txt', Body: 'hello minio', ContentType: 'text/plain' })
  );
  await s3.send(
    new PutObjectCommand({
      Bucket: 'via-minio',
      Key: 'x/stream.bin',
      Body: generated(300_000, 2),
      ContentLength: 300_000,
    })
  );
  // The minio client has no conditional writes: the endpoint refuses them rather than write unconditionally.
  const cond = await errorOf(
    s3.send(new PutObjectCommand({ Bucket: 'via-minio', Key: 'x/hello.txt', Body: 'taken over', IfNoneMatch: '*' }))
  );
  t.equal(cond.name, 'NotImplemented');
  t.equal(
    cond.message,
    "Conditional writes (If-None-Match on PutObject) are not supported by this bucket's storage vendor."
  );
  const range = await s3.send(new GetObjectCommand({ Bucket: 'via-minio', Key: 'x/hello.txt', Range: 'bytes=6-' }));
  t.equal(await range.Body!.transformToString(), 'minio');
  t.equal(range.ContentType, 'text/plain');
  const got = await s3.send(new GetObjectCommand({ Bucket: 'via-minio', Key: 'x/stream.bin' }));
  t.same(await sha256Of(got.Body as Readable), await sha256Of(generated(300_000, 2)));
  const page = await s3.send(new ListObjectsV2Command({ Bucket: 'via-minio', Prefix: 'x/', MaxKeys: 1 }));
  t.same([page.Contents?.map((o) => o.Key), page.IsTruncated], [['x/hello.txt'], true]);
  const rest = await s3.send(
    new ListObjectsV2Command({
      Bucket: 'via-minio',
      Prefix: 'x/',
      MaxKeys: 5,
      ContinuationToken: page.NextContinuationToken,
    })
  );
  t.same(
    rest.Contents?.map((o) => o.Key),
    ['x/stream.bin']
  );
  t.same(
    (
      await app.inject({
        method: 'DELETE',
        url: '/v1/storage/buckets/via-minio/objects/x%2Fhello.txt',
        headers: u.auth,
      })
    ).json(),
    { ok: true }
  );
  t.equal(
    (await errorOf(s3.send(new GetObjectCommand({ Bucket: 'via-minio', Key: 'x/hello.txt' })))).name,
    'NoSuchKey'
  );
});
