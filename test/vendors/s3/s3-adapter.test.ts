import t from 'tap';
import {
  S3Client,
  CreateBucketCommand,
  PutObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  DeleteObjectCommand,
  ListObjectsV2Command,
} from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import { activate, generated, sha256Of, errorOf, urlExpiry } from '../../plugins/storage/helpers.js';
import { listeningApp } from '../../helpers/listening-app.js';
import { createBucket, presign, s3Credentials } from '../../helpers/storage-api.js';

// database-independent: the s3 adapter against a second gateway; the rows are the storage tests', on both.

// The s3 adapter against real code on both ends: gateway A serves S3 (local-storage behind
// its own endpoint); gateway B keeps its buckets on A through the s3 adapter (AWS SDK).
async function pair(t: Tap.Test) {
  const A = await listeningApp(t);
  const owner = await activate(A.app);
  await createBucket(A.app, owner, 'backing');
  const cred = await s3Credentials(A.app, owner);
  const B = await listeningApp(t, {
    // The adapter's own presigned URLs (the default hands out the gateway's).
    plugins: { storage: { presign_through: 'vendor' } },
    vendors: [
      {
        id: 'remote',
        use: 's3',
        config: {
          endpoint: cred.endpoint,
          region: cred.region,
          bucket: 'backing',
          prefix: 'svc/',
          force_path_style: true,
          access_key_id: cred.access_key_id,
          secret_access_key: cred.secret_access_key,
        },
      },
    ],
  });
  return { A, B, owner };
}

t.test('API presign through the s3 adapter: URLs point at the S3 service, bytes round-trip', async (t) => {
  const { A, B, owner } = await pair(t);
  const u = await activate(B.app);
  const made = await createBucket(B.app, u, 'photos');
  t.equal(made.vendor, 'remote');
  const put = (await presign(B.app, u, 'photos', 'trip/one.bin', { method: 'PUT' })).json();
  t.ok(put.url.startsWith(`${A.base}/s3/backing/svc/${u.account_id}/photos/trip/one.bin?`), put.url);
  const size = 2 * 1024 * 1024 + 5;
  const up = await fetch(put.url, { method: 'PUT', body: generated(size, 3) as any, duplex: 'half' } as any);
  t.equal(up.status, 200, await up.clone().text());
  const get = (await presign(B.app, u, 'photos', 'trip/one.bin', { method: 'GET', expires_seconds: 60 })).json();
  t.same(
    [put.expires_at, get.expires_at],
    [urlExpiry(put.url), urlExpiry(get.url)],
    "expires_at is the SDK-signed URL's own expiry"
  );
  const down = await fetch(get.url);
  t.equal(down.status, 200);
  t.same(await sha256Of(down.body as any), await sha256Of(generated(size, 3)));
  const head = await B.app.inject({
    method: 'GET',
    url: '/v1/storage/buckets/photos/objects/trip%2Fone.bin',
    headers: u.auth,
  });
  t.equal(head.json().size, size);
  const listed = (
    await B.app.inject({ method: 'GET', url: '/v1/storage/buckets/photos/objects?prefix=trip/', headers: u.auth })
  ).json();
  t.same(
    listed.items.map((o: any) => o.key),
    ['trip/one.bin']
  );
  t.same(
    Object.keys(listed.items[0]).sort(),
    ['etag', 'key', 'last_modified', 'size'],
    'ListObjectsV2 has no content type: none is made up'
  );
  t.equal(head.json().content_type, 'application/octet-stream', 'a HEAD gives the stored one');
  const notEmpty = await B.app.inject({ method: 'DELETE', url: '/v1/storage/buckets/photos', headers: u.auth });
  t.equal(notEmpty.statusCode, 409);
  t.same(
    (
      await B.app.inject({
        method: 'DELETE',
        url: '/v1/storage/buckets/photos/objects/trip%2Fone.bin',
        headers: u.auth,
      })
    ).json(),
    { ok: true }
  );
  t.equal(
    (await B.app.inject({ method: 'GET', url: '/v1/storage/buckets/photos/objects/trip%2Fone.bin', headers: u.auth }))
      .statusCode,
    404
  );
  t.same((await B.app.inject({ method: 'DELETE', url: '/v1/storage/buckets/photos', headers: u.auth })).json(), {
    ok: true,
  });
  // Nothing of B's account is left in A's backing bucket.
  const left = (
    await A.app.inject({
      method: 'GET',
      url: `/v1/storage/buckets/backing/objects?prefix=svc/${u.account_id}/`,
      headers: owner.auth,
    })
  ).json();
  t.same(left.items, []);
});

t.test('the AWS SDK against gateway B, whose buckets live on A through the s3 adapter', async (t) => {
  const { B } = await pair(t);
  const u = await activate(B.app);
  const c = await s3Credentials(B.app, u);
  const s3 = new S3Client({
    endpoint: c.endpoint,
    region: c.region,
    forcePathStyle: true,
    credentials: { accessKeyId: c.access_key_id, secretAccessKey: c.secret_access_key },
  });
  t.teardown(() => s3.destroy());
  await s3.send(new CreateBucketCommand({ Bucket: 'via-b' }));
  await s3.send(
    new PutObjectCommand({
      Bucket: 'via-b',
      Key: 'a.txt',
      Body: 'hello through two gateways',
      ContentType: 'text/plain',
    })
  );
  const size = 1024 * 1024 + 1;
  await s3.send(
    new PutObjectCommand({ Bucket: 'via-b', Key: 'dir/stream.bin', Body: generated(size, 11), ContentLength: size })
  );
  const got = await s3.send(new GetObjectCommand({ Bucket: 'via-b', Key: 'dir/stream.bin' }));
  t.same(await sha256Of(got.Body as Readable), await sha256Of(generated(size, 11)));
  const range = await s3.send(new GetObjectCommand({ Bucket: 'via-b', Key: 'a.txt', Range: 'bytes=6-12' }));
  t.equal(await range.Body!.transformToString(), 'through');
  const head = await s3.send(new HeadObjectCommand({ Bucket: 'via-b', Key: 'a.txt' }));
  t.equal(head.ContentType, 'text/plain');
  for (let i = 0; i < 3; i++)
    await s3.send(new PutObjectCommand({ Bucket: 'via-b', Key: `dir/sub/${i}`, Body: String(i) }));
  const p1 = await s3.send(new ListObjectsV2Command({ Bucket: 'via-b', Prefix: 'dir/', Delimiter: '/', MaxKeys: 1 }));
  t.same([p1.Contents?.map((o) => o.Key), p1.CommonPrefixes, p1.IsTruncated], [['dir/stream.bin'], undefined, true]);
  t.same(
    p1.Contents?.map((o) => [o.Size, typeof o.ETag, o.LastModified instanceof Date, o.StorageClass]),
    [[size, 'string', true, 'STANDARD']],
    "the endpoint's own listing is unchanged"
  );
  const api = (
    await B.app.inject({ method: 'GET', url: '/v1/storage/buckets/via-b/objects?prefix=a', headers: u.auth })
  ).json();
  t.same(
    api.items.map((o: any) => [o.key, o.content_type]),
    [['a.txt', undefined]],
    'the API listing leaves the unknown type out'
  );
  const p2 = await s3.send(
    new ListObjectsV2Command({
      Bucket: 'via-b',
      Prefix: 'dir/',
      Delimiter: '/',
      MaxKeys: 1,
      ContinuationToken: p1.NextContinuationToken,
    })
  );
  t.same([p2.Contents, p2.CommonPrefixes?.map((p) => p.Prefix), p2.IsTruncated], [undefined, ['dir/sub/'], false]);
  // A key that ends with the delimiter only inside the prefix is not a common prefix: the next page starts right after it.
  for (const k of ['é', 'é/x']) await s3.send(new PutObjectCommand({ Bucket: 'via-b', Key: k, Body: k }));
  const e1 = await s3.send(new ListObjectsV2Command({ Bucket: 'via-b', Prefix: 'é', Delimiter: 'é', MaxKeys: 1 }));
  const e2 = await s3.send(
    new ListObjectsV2Command({
      Bucket: 'via-b',
      Prefix: 'é',
      Delimiter: 'é',
      MaxKeys: 1,
      ContinuationToken: e1.NextContinuationToken,
    })
  );
  t.same([e1.Contents?.map((o) => o.Key), e2.Contents?.map((o) => o.Key)], [['é'], ['é/x']]);
  await s3.send(new DeleteObjectCommand({ Bucket: 'via-b', Key: 'a.txt' }));
  t.equal((await errorOf(s3.send(new GetObjectCommand({ Bucket: 'via-b', Key: 'a.txt' })))).name, 'NoSuchKey');
  t.equal(
    (await errorOf(s3.send(new GetObjectCommand({ Bucket: 'via-b', Key: 'dir/stream.bin', Range: 'bytes=99999999-' }))))
      .name,
    'InvalidRange'
  );
});
