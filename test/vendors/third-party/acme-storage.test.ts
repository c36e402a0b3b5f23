import t from 'tap';
import {
  S3Client,
  CreateBucketCommand,
  PutObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  DeleteObjectCommand,
} from '@aws-sdk/client-s3';
import { activate, makeApp } from '../../helpers/app.js';
import { thirdPartyProject } from '../../helpers/third-party.js';

// database-independent: a storage vendor from npm; the rows are the storage tests', on both.

// svc-vendor-acme-storage (test/fixtures/packages): a storage vendor from npm, named in the
// config by its package name, built only on svc-gateway's exports. The AWS SDK talks to the
// gateway's S3 endpoint; the bytes go to and come from the package's store.

t.test('a third-party storage package serves S3 PUT, GET and LIST through the gateway', async (t) => {
  const baseDir = await thirdPartyProject(t, ['svc-vendor-acme-storage']);
  const { app } = await makeApp(
    t,
    {
      vendors: [{ id: 'acme', use: 'svc-vendor-acme-storage', config: { region: 'acme-eu' } }],
    },
    { baseDir }
  );
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  const who = await activate(app);
  const url = '/v1/storage/credentials';
  const creds = (await app.inject({ method: 'POST', url, headers: who.auth, payload: {} })).json();
  const s3 = new S3Client({
    endpoint: new URL(new URL(creds.endpoint).pathname, base).href,
    region: creds.region,
    forcePathStyle: true,
    credentials: { accessKeyId: creds.access_key_id, secretAccessKey: creds.secret_access_key },
  });
  t.teardown(() => s3.destroy());

  await s3.send(new CreateBucketCommand({ Bucket: 'acme-bucket' }));
  const buckets = (await app.inject({ method: 'GET', url: '/v1/storage/buckets', headers: who.auth })).json().items;
  t.match(buckets, [{ bucket: 'acme-bucket', vendor: 'acme', region: 'acme-eu' }], "the bucket is the package's");

  const put = await s3.send(
    new PutObjectCommand({
      Bucket: 'acme-bucket',
      Key: 'docs/a.txt',
      Body: 'hello acme',
      ContentType: 'text/plain',
    })
  );
  t.match(put.ETag, /^"[0-9a-f]{32}"$/);
  for (const k of ['docs/b.txt', 'logs/1.log', 'logs/2.log', 'top.txt']) {
    await s3.send(new PutObjectCommand({ Bucket: 'acme-bucket', Key: k, Body: k }));
  }

  const got = await s3.send(new GetObjectCommand({ Bucket: 'acme-bucket', Key: 'docs/a.txt' }));
  t.equal(await got.Body!.transformToString(), 'hello acme');
  t.equal(got.ContentType, 'text/plain');
  t.equal(got.ETag, put.ETag);
  const range = await s3.send(new GetObjectCommand({ Bucket: 'acme-bucket', Key: 'docs/a.txt', Range: 'bytes=6-9' }));
  t.equal(await range.Body!.transformToString(), 'acme');
  t.equal(range.ContentRange, 'bytes 6-9/10');

  const all = await s3.send(new ListObjectsV2Command({ Bucket: 'acme-bucket' }));
  t.same(
    all.Contents?.map((o) => [o.Key, o.Size]),
    [
      ['docs/a.txt', 10],
      ['docs/b.txt', 10],
      ['logs/1.log', 10],
      ['logs/2.log', 10],
      ['top.txt', 7],
    ]
  );
  const grouped = await s3.send(new ListObjectsV2Command({ Bucket: 'acme-bucket', Delimiter: '/' }));
  t.same(
    grouped.CommonPrefixes?.map((p) => p.Prefix),
    ['docs/', 'logs/']
  );
  t.same(
    grouped.Contents?.map((o) => o.Key),
    ['top.txt']
  );
  const keys: string[] = [];
  let token: string | undefined;
  let pages = 0;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({
        Bucket: 'acme-bucket',
        MaxKeys: 2,
        ContinuationToken: token,
      })
    );
    pages++;
    keys.push(...(page.Contents ?? []).map((o) => o.Key!));
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  t.equal(pages, 3, 'paged two keys at a time');
  t.same(keys, ['docs/a.txt', 'docs/b.txt', 'logs/1.log', 'logs/2.log', 'top.txt']);

  await s3.send(new DeleteObjectCommand({ Bucket: 'acme-bucket', Key: 'top.txt' }));
  const gone = s3.send(new GetObjectCommand({ Bucket: 'acme-bucket', Key: 'top.txt' }));
  const missing = await gone.then(
    () => undefined,
    (e: Error) => e
  );
  t.equal(missing?.name, 'NoSuchKey');
});
