import t from 'tap';
import type { Readable } from 'node:stream';
import {
  S3Client,
  CreateBucketCommand,
  HeadBucketCommand,
  PutObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  DeleteObjectCommand,
  DeleteBucketCommand,
  ListObjectsV2Command,
  ListBucketsCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { activate, generated, sha256Of, errorOf } from './helpers.js';
import { listeningApp, STORAGE_VENDOR } from '../../helpers/listening-app.js';
import { s3Credentials, createBucket } from '../../helpers/storage-api.js';
import type { FastifyInstance } from 'fastify';
import type { Activated } from '../../helpers/app.js';

// database-independent: the AWS SDK's view; buckets and credentials rows are api.test.ts's, on both.

async function client(t: Tap.Test, app: FastifyInstance, who: Activated, base: string) {
  const c = await s3Credentials(app, who);
  t.equal(c.endpoint, `${base}/s3`);
  const s3 = new S3Client({
    endpoint: c.endpoint,
    region: c.region,
    forcePathStyle: true,
    credentials: { accessKeyId: c.access_key_id, secretAccessKey: c.secret_access_key },
  });
  t.teardown(() => s3.destroy());
  return s3;
}

t.test('the AWS SDK against the gateway: buckets, put (buffer and stream), ranged get, list, delete', async (t) => {
  const { app, base } = await listeningApp(t);
  const a = await activate(app);
  const s3 = await client(t, app, a, base);
  const encodings: string[] = [];
  app.server.on('request', (req) => {
    if (req.method === 'PUT')
      encodings.push(`${req.headers['content-encoding'] ?? ''} ${req.headers['x-amz-content-sha256']}`);
  });

  await s3.send(new CreateBucketCommand({ Bucket: 'sdk-bucket' }));
  await s3.send(new HeadBucketCommand({ Bucket: 'sdk-bucket' }));
  const again = await errorOf(s3.send(new CreateBucketCommand({ Bucket: 'sdk-bucket' })));
  t.equal(again.name, 'BucketAlreadyOwnedByYou');
  const listed = await s3.send(new ListBucketsCommand({}));
  t.same(
    listed.Buckets?.map((b) => b.Name),
    ['sdk-bucket']
  );
  const api = await app.inject({ method: 'GET', url: '/v1/storage/buckets', headers: a.auth });
  t.same(
    api.json().items.map((b: any) => [b.bucket, b.vendor]),
    [['sdk-bucket', STORAGE_VENDOR]],
    'the API sees buckets made over S3'
  );

  const buf = Buffer.from('0123456789abcdefghij');
  const put = await s3.send(
    new PutObjectCommand({ Bucket: 'sdk-bucket', Key: 'docs/a.txt', Body: buf, ContentType: 'text/plain' })
  );
  t.match(put.ETag, /^"[0-9a-f]{32}"$/);

  const size = 3 * 1024 * 1024 + 7;
  const streamed = await s3.send(
    new PutObjectCommand({
      Bucket: 'sdk-bucket',
      Key: 'docs/stream.bin',
      Body: generated(size, 7),
      ContentLength: size,
    })
  );
  t.ok(streamed.ETag);
  t.ok(
    encodings.some((e) => e.includes('aws-chunked')),
    `the stream went up aws-chunked (${encodings.join(' | ')})`
  );

  const got = await s3.send(new GetObjectCommand({ Bucket: 'sdk-bucket', Key: 'docs/stream.bin' }));
  t.equal(got.ContentLength, size);
  t.same(await sha256Of(got.Body as Readable), await sha256Of(generated(size, 7)));

  const range = await s3.send(new GetObjectCommand({ Bucket: 'sdk-bucket', Key: 'docs/a.txt', Range: 'bytes=5-9' }));
  t.equal(await range.Body!.transformToString(), '56789');
  t.equal(range.ContentRange, 'bytes 5-9/20');
  const head = await s3.send(new HeadObjectCommand({ Bucket: 'sdk-bucket', Key: 'docs/a.txt' }));
  t.equal(head.ContentLength, 20);
  t.equal(head.ContentType, 'text/plain');
  t.equal(head.ETag, put.ETag);

  for (let i = 0; i < 5; i++)
    await s3.send(new PutObjectCommand({ Bucket: 'sdk-bucket', Key: `logs/2026/${i}.log`, Body: `line ${i}` }));
  await s3.send(new PutObjectCommand({ Bucket: 'sdk-bucket', Key: 'logs/2027/x.log', Body: 'x' }));
  const keys: string[] = [];
  let token: string | undefined;
  let pages = 0;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: 'sdk-bucket', Prefix: 'logs/2026/', MaxKeys: 2, ContinuationToken: token })
    );
    pages++;
    keys.push(...(page.Contents ?? []).map((o) => o.Key!));
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  t.equal(pages, 3);
  t.same(
    keys,
    [0, 1, 2, 3, 4].map((i) => `logs/2026/${i}.log`)
  );
  const grouped = await s3.send(new ListObjectsV2Command({ Bucket: 'sdk-bucket', Prefix: 'logs/', Delimiter: '/' }));
  t.same(
    grouped.CommonPrefixes?.map((p) => p.Prefix),
    ['logs/2026/', 'logs/2027/']
  );
  t.equal(grouped.KeyCount, 2);

  const presigned = await getSignedUrl(s3, new GetObjectCommand({ Bucket: 'sdk-bucket', Key: 'docs/a.txt' }), {
    expiresIn: 60,
  });
  t.equal(
    await (await fetch(presigned)).text(),
    buf.toString(),
    'SDK-presigned GET (with its checksum-mode parameter)'
  );
  const presignedPut = await getSignedUrl(s3, new PutObjectCommand({ Bucket: 'sdk-bucket', Key: 'docs/p.txt' }), {
    expiresIn: 60,
  });
  t.equal(
    (await fetch(presignedPut, { method: 'PUT', body: 'via presigned put' })).status,
    200,
    'SDK-presigned PUT (with its checksum parameters)'
  );

  await s3.send(new DeleteObjectCommand({ Bucket: 'sdk-bucket', Key: 'docs/a.txt' }));
  const missing = await errorOf(s3.send(new GetObjectCommand({ Bucket: 'sdk-bucket', Key: 'docs/a.txt' })));
  t.equal(missing.name, 'NoSuchKey');
  t.equal(missing.$metadata.httpStatusCode, 404);
  const headMissing = await errorOf(s3.send(new HeadObjectCommand({ Bucket: 'sdk-bucket', Key: 'docs/a.txt' })));
  t.equal(headMissing.name, 'NotFound');

  const notEmpty = await errorOf(s3.send(new DeleteBucketCommand({ Bucket: 'sdk-bucket' })));
  t.equal(notEmpty.name, 'BucketNotEmpty');
  let left = await s3.send(new ListObjectsV2Command({ Bucket: 'sdk-bucket' }));
  for (const o of left.Contents ?? []) await s3.send(new DeleteObjectCommand({ Bucket: 'sdk-bucket', Key: o.Key }));
  left = await s3.send(new ListObjectsV2Command({ Bucket: 'sdk-bucket' }));
  t.equal(left.KeyCount, 0);
  await s3.send(new DeleteBucketCommand({ Bucket: 'sdk-bucket' }));
  const gone = await errorOf(s3.send(new HeadBucketCommand({ Bucket: 'sdk-bucket' })));
  t.equal(gone.$metadata.httpStatusCode, 404);
});

t.test("keys with .. and other bad keys are refused; another account's bucket is NoSuchBucket", async (t) => {
  const { app, base, dir } = await listeningApp(t);
  const a = await activate(app);
  const b = await activate(app);
  await createBucket(app, a, 'assets');
  await createBucket(app, b, 'assets');
  await createBucket(app, b, 'b-only');
  const s3 = await client(t, app, a, base);
  for (const Key of ['../escape.txt', 'a/../../escape.txt', 'a//b', 'ctl\u0001x']) {
    const e = await errorOf(s3.send(new PutObjectCommand({ Bucket: 'assets', Key, Body: 'x' })));
    t.equal(e.$metadata.httpStatusCode, 400, JSON.stringify(Key));
  }
  const long = await errorOf(s3.send(new PutObjectCommand({ Bucket: 'assets', Key: 'k'.repeat(1025), Body: 'x' })));
  t.equal(long.name, 'KeyTooLongError');
  const other = await errorOf(s3.send(new PutObjectCommand({ Bucket: 'b-only', Key: 'x', Body: 'x' })));
  t.equal(other.name, 'NoSuchBucket');
  await s3.send(new PutObjectCommand({ Bucket: 'assets', Key: 'mine.txt', Body: 'A' }));
  const s3b = await client(t, app, b, base);
  const notB = await errorOf(s3b.send(new GetObjectCommand({ Bucket: 'assets', Key: 'mine.txt' })));
  t.equal(notB.name, 'NoSuchKey', "b's assets is another bucket");
  const { readdirSync } = await import('node:fs');
  t.same(
    readdirSync(dir).filter((n) => n.includes('escape')),
    [],
    'nothing written outside the objects dir'
  );
});

t.test('wrong secret, skewed clock and revoked keys are refused', async (t) => {
  const { app, base } = await listeningApp(t);
  const a = await activate(app);
  await createBucket(app, a, 'auth-bucket');
  const c = await s3Credentials(app, a);
  const mk = (secret: string, offset = 0) =>
    new S3Client({
      endpoint: c.endpoint,
      region: c.region,
      forcePathStyle: true,
      maxAttempts: 1,
      systemClockOffset: offset,
      credentials: { accessKeyId: c.access_key_id, secretAccessKey: secret },
    });
  const wrong = mk(c.secret_access_key.slice(0, -1) + (c.secret_access_key.endsWith('a') ? 'b' : 'a'));
  t.teardown(() => wrong.destroy());
  t.equal(
    (await errorOf(wrong.send(new ListObjectsV2Command({ Bucket: 'auth-bucket' })))).name,
    'SignatureDoesNotMatch'
  );
  const skewed = mk(c.secret_access_key, 60 * 60 * 1000);
  t.teardown(() => skewed.destroy());
  // The SDK corrects its clock on RequestTimeTooSkewed and retries; with one attempt it reports it.
  t.equal(
    (await errorOf(skewed.send(new ListObjectsV2Command({ Bucket: 'auth-bucket' })))).name,
    'RequestTimeTooSkewed'
  );
  const ok = mk(c.secret_access_key);
  t.teardown(() => ok.destroy());
  await ok.send(new ListObjectsV2Command({ Bucket: 'auth-bucket' }));
  const rev = await app.inject({
    method: 'DELETE',
    url: `/v1/storage/credentials/${c.access_key_id}`,
    headers: a.auth,
  });
  t.equal(rev.statusCode, 200);
  t.equal((await errorOf(ok.send(new ListObjectsV2Command({ Bucket: 'auth-bucket' })))).name, 'InvalidAccessKeyId');
  const unsigned = await fetch(`${base}/s3/auth-bucket?list-type=2`);
  t.equal(unsigned.status, 403);
});
