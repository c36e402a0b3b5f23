import t from 'tap';
import {
  S3Client,
  CopyObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import type { FastifyInstance } from 'fastify';
import { activate, errorOf } from '../helpers.js';
import { listeningApp } from '../../../helpers/listening-app.js';
import { s3Credentials, createBucket } from '../../../helpers/storage-api.js';
import type { Activated } from '../../../helpers/app.js';
import { presignUrl } from '../../../../core/capabilities/storage/sigv4.js';

// database-independent: copy and delete in the vendor; metering is usage.test.ts's, on both.

async function client(t: Tap.Test, app: FastifyInstance, who: Activated) {
  const c = await s3Credentials(app, who);
  const s3 = new S3Client({
    endpoint: c.endpoint,
    region: c.region,
    forcePathStyle: true,
    credentials: { accessKeyId: c.access_key_id, secretAccessKey: c.secret_access_key },
  });
  t.teardown(() => s3.destroy());
  return { s3, c };
}

const usage = async (app: FastifyInstance, a: Activated) =>
  (await app.inject({ method: 'GET', url: '/v1/storage/usage', headers: a.auth })).json();

t.test('CopyObject: same and other bucket, content type kept or replaced, metered, refusals', async (t) => {
  const { app } = await listeningApp(t);
  const a = await activate(app);
  const b = await activate(app);
  const { s3 } = await client(t, app, a);
  await createBucket(app, a, 'src-bkt');
  await createBucket(app, a, 'dst-bkt');
  await createBucket(app, b, 'theirs');
  const put = await s3.send(
    new PutObjectCommand({ Bucket: 'src-bkt', Key: 'dir/a b.txt', Body: 'copy me', ContentType: 'text/plain' })
  );
  const copied = await s3.send(
    new CopyObjectCommand({ Bucket: 'dst-bkt', Key: 'c.txt', CopySource: 'src-bkt/dir/a%20b.txt' })
  );
  t.equal(copied.CopyObjectResult?.ETag, put.ETag, 'same bytes, same ETag');
  const got = await s3.send(new GetObjectCommand({ Bucket: 'dst-bkt', Key: 'c.txt' }));
  t.equal(got.ContentType, 'text/plain');
  t.equal(await got.Body!.transformToString(), 'copy me');
  await s3.send(
    new CopyObjectCommand({
      Bucket: 'src-bkt',
      Key: 'dir/a b.txt',
      CopySource: '/src-bkt/dir/a%20b.txt',
      MetadataDirective: 'REPLACE',
      ContentType: 'text/markdown',
    })
  );
  t.equal(
    (await s3.send(new HeadObjectCommand({ Bucket: 'src-bkt', Key: 'dir/a b.txt' }))).ContentType,
    'text/markdown',
    'REPLACE onto itself'
  );
  t.equal((await usage(app, a)).bytes_stored, 14, 'the copy is stored bytes; replacing itself adds none');
  t.equal(
    (
      await errorOf(
        s3.send(new CopyObjectCommand({ Bucket: 'src-bkt', Key: 'dir/a b.txt', CopySource: 'src-bkt/dir/a%20b.txt' }))
      )
    ).name,
    'InvalidRequest',
    'onto itself unchanged'
  );
  t.equal(
    (await errorOf(s3.send(new CopyObjectCommand({ Bucket: 'dst-bkt', Key: 'x', CopySource: 'src-bkt/missing' }))))
      .name,
    'NoSuchKey'
  );
  t.equal(
    (await errorOf(s3.send(new CopyObjectCommand({ Bucket: 'dst-bkt', Key: 'x', CopySource: 'theirs/anything' }))))
      .name,
    'NoSuchBucket',
    "another account's bucket"
  );
  t.equal(
    (await errorOf(s3.send(new CopyObjectCommand({ Bucket: 'dst-bkt', Key: 'x', CopySource: 'src-bkt/../etc' })))).name,
    'InvalidArgument'
  );

  // A presigned PUT URL cannot be turned into a copy by adding the (unsigned) header.
  const c = await s3Credentials(app, a);
  const url = presignUrl({
    method: 'PUT',
    endpoint: c.endpoint,
    bucket: 'dst-bkt',
    key: 'stolen',
    region: c.region,
    accessKeyId: c.access_key_id,
    secret: c.secret_access_key,
    expiresSeconds: 60,
  });
  const res = await fetch(url, { method: 'PUT', headers: { 'x-amz-copy-source': 'src-bkt/dir/a%20b.txt' } });
  t.equal(res.status, 403);
  t.match(await res.text(), /not signed: x-amz-copy-source/);
  t.equal((await errorOf(s3.send(new HeadObjectCommand({ Bucket: 'dst-bkt', Key: 'stolen' })))).name, 'NotFound');
});

t.test('CopyObject is capped like a put', async (t) => {
  const { app } = await listeningApp(t, {
    vendors: [],
    plugins: { storage: { tier_caps: { free: { max_object_bytes: 1000, max_total_bytes: 1500 } } } },
  });
  const a = await activate(app);
  const { s3 } = await client(t, app, a);
  await createBucket(app, a, 'capped');
  await s3.send(new PutObjectCommand({ Bucket: 'capped', Key: 'big', Body: Buffer.alloc(900) }));
  const e = await errorOf(s3.send(new CopyObjectCommand({ Bucket: 'capped', Key: 'big2', CopySource: 'capped/big' })));
  t.equal(e.name, 'EntityTooLarge');
  t.match(e.message, /storage cap/);
  t.equal(e.$metadata.httpStatusCode, 413);
  t.equal((await usage(app, a)).bytes_stored, 900);
});

t.test(
  'DeleteObjects: many keys in one request, missing keys count as deleted, quiet mode, errors in XML',
  async (t) => {
    const { app } = await listeningApp(t);
    const a = await activate(app);
    const { s3, c } = await client(t, app, a);
    await createBucket(app, a, 'del-bkt');
    for (const k of ['a', 'b/c', 'd & e'])
      await s3.send(new PutObjectCommand({ Bucket: 'del-bkt', Key: k, Body: 'xx' }));
    const res = await s3.send(
      new DeleteObjectsCommand({
        Bucket: 'del-bkt',
        Delete: { Objects: [{ Key: 'a' }, { Key: 'd & e' }, { Key: 'never' }, { Key: 'x/../y' }] },
      })
    );
    t.same(
      res.Deleted?.map((d) => d.Key),
      ['a', 'd & e', 'never']
    );
    t.same(
      res.Errors?.map((e) => [e.Key, e.Code]),
      [['x/../y', 'InvalidArgument']]
    );
    const left = await s3.send(new ListObjectsV2Command({ Bucket: 'del-bkt' }));
    t.same(
      left.Contents?.map((o) => o.Key),
      ['b/c']
    );
    t.equal((await usage(app, a)).bytes_stored, 2);
    const quiet = await s3.send(
      new DeleteObjectsCommand({ Bucket: 'del-bkt', Delete: { Quiet: true, Objects: [{ Key: 'b/c' }] } })
    );
    t.equal(quiet.Deleted, undefined);
    t.equal((await usage(app, a)).bytes_stored, 0);

    // A document that is not XML, signed properly: MalformedXML, nothing deleted.
    await s3.send(new PutObjectCommand({ Bucket: 'del-bkt', Key: 'keep', Body: 'k' }));
    const url = presignUrl({
      method: 'POST',
      endpoint: c.endpoint,
      bucket: 'del-bkt',
      key: '',
      region: c.region,
      accessKeyId: c.access_key_id,
      secret: c.secret_access_key,
      expiresSeconds: 60,
      query: [['delete', '']],
    });
    const bad = await fetch(url, { method: 'POST', body: '<Delete><Object><Key>keep</Key></Delete>' });
    t.equal(bad.status, 400);
    t.match(await bad.text(), /<Code>MalformedXML<\/Code>/);
    t.ok(await s3.send(new HeadObjectCommand({ Bucket: 'del-bkt', Key: 'keep' })));
  }
);

t.test('methods S3 does not have are answered 405 in S3 XML', async (t) => {
  const { app, base } = await listeningApp(t);
  // OPTIONS is a CORS preflight (s3/cors.test.ts).
  for (const [method, path] of [
    ['PATCH', '/s3/some-bucket/key'],
    ['PATCH', '/s3/some-bucket'],
    ['PATCH', '/s3'],
  ]) {
    const res = await fetch(base + path, { method });
    t.equal(res.status, 405, `${method} ${path}`);
    t.match(res.headers.get('content-type'), /application\/xml/);
    t.match(await res.text(), /<Code>MethodNotAllowed<\/Code>/);
  }
  const a = await activate(app);
  const { c } = await client(t, app, a);
  await createBucket(app, a, 'post-bkt');
  const url = presignUrl({
    method: 'POST',
    endpoint: c.endpoint,
    bucket: 'post-bkt',
    key: 'obj',
    region: c.region,
    accessKeyId: c.access_key_id,
    secret: c.secret_access_key,
    expiresSeconds: 60,
  });
  const post = await fetch(url, { method: 'POST', body: 'x' });
  t.equal(post.status, 405, 'POST on an object without ?uploads');
  t.match(await post.text(), /<Code>MethodNotAllowed<\/Code>/);
});
