import t from 'tap';
import { createHash } from 'node:crypto';
import {
  S3Client,
  PutObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  CreateMultipartUploadCommand,
  UploadPartCommand,
  ListPartsCommand,
} from '@aws-sdk/client-s3';
import { activate, errorOf } from '../helpers.js';
import { listeningApp } from '../../../helpers/listening-app.js';
import { createBucket, s3Credentials, storageUsage } from '../../../helpers/storage-api.js';

// database-independent: digests checked on the body; no row of its own.

// Content-MD5 on PutObject and UploadPart, as S3 checks it: a mismatch is BadDigest, a value
// that is not a base64 MD5 is InvalidDigest, and either way nothing is stored or metered.
// The SDK only sends Content-MD5 when checksums are computed "when required" and it is given.

const md5 = (b: Buffer) => createHash('md5').update(b).digest('base64');

t.test('Content-MD5 is checked on PutObject and UploadPart, small and streamed bodies', async (t) => {
  const { app } = await listeningApp(t);
  const a = await activate(app);
  await createBucket(app, a, 'md5');
  const c = await s3Credentials(app, a);
  const s3 = new S3Client({
    endpoint: c.endpoint,
    region: c.region,
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    credentials: { accessKeyId: c.access_key_id, secretAccessKey: c.secret_access_key },
  });
  t.teardown(() => s3.destroy());
  const sent: string[] = [];
  app.server.on('request', (req) => {
    if (req.method === 'PUT') sent.push(String(req.headers['content-md5']));
  });

  const body = Buffer.from('the first version');
  await s3.send(new PutObjectCommand({ Bucket: 'md5', Key: 'a', Body: body, ContentMD5: md5(body) }));
  t.equal(sent[0], md5(body), 'the SDK sent Content-MD5');
  const before = await storageUsage(app, a);

  const other = Buffer.from('a second version');
  const bad = await errorOf(
    s3.send(new PutObjectCommand({ Bucket: 'md5', Key: 'a', Body: other, ContentMD5: md5(body) }))
  );
  t.equal(bad.name, 'BadDigest');
  t.equal(bad.$metadata.httpStatusCode, 400);
  t.equal(
    await (await s3.send(new GetObjectCommand({ Bucket: 'md5', Key: 'a' }))).Body!.transformToString(),
    'the first version',
    'the old object is intact'
  );

  const fresh = await errorOf(
    s3.send(new PutObjectCommand({ Bucket: 'md5', Key: 'b', Body: other, ContentMD5: md5(body) }))
  );
  t.equal(fresh.name, 'BadDigest');
  t.equal(
    (await errorOf(s3.send(new HeadObjectCommand({ Bucket: 'md5', Key: 'b' })))).$metadata.httpStatusCode,
    404,
    'no object was made'
  );

  const invalid = await errorOf(
    s3.send(new PutObjectCommand({ Bucket: 'md5', Key: 'b', Body: other, ContentMD5: 'not-an-md5' }))
  );
  t.equal(invalid.name, 'InvalidDigest');
  t.equal(invalid.$metadata.httpStatusCode, 400);
  const short = await errorOf(
    s3.send(
      new PutObjectCommand({ Bucket: 'md5', Key: 'b', Body: other, ContentMD5: Buffer.alloc(8).toString('base64') })
    )
  );
  t.equal(short.name, 'InvalidDigest', 'base64, but not 16 bytes');

  // Past the small-body limit the body streams to the vendor: checked at its end all the same.
  const big = Buffer.alloc(300 * 1024, 7);
  const bigBad = await errorOf(
    s3.send(new PutObjectCommand({ Bucket: 'md5', Key: 'big', Body: big, ContentMD5: md5(body) }))
  );
  t.equal(bigBad.name, 'BadDigest');
  t.equal((await errorOf(s3.send(new HeadObjectCommand({ Bucket: 'md5', Key: 'big' })))).$metadata.httpStatusCode, 404);
  t.equal((await storageUsage(app, a)).bytes_stored, before.bytes_stored, 'refused uploads are not metered');
  const bigOk = await s3.send(new PutObjectCommand({ Bucket: 'md5', Key: 'big', Body: big, ContentMD5: md5(big) }));
  t.equal(bigOk.ETag, `"${createHash('md5').update(big).digest('hex')}"`);

  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'md5', Key: 'mp' }));
  const part = Buffer.alloc(1024, 1);
  const partBad = await errorOf(
    s3.send(
      new UploadPartCommand({ Bucket: 'md5', Key: 'mp', UploadId, PartNumber: 1, Body: part, ContentMD5: md5(body) })
    )
  );
  t.equal(partBad.name, 'BadDigest');
  t.same(
    (await s3.send(new ListPartsCommand({ Bucket: 'md5', Key: 'mp', UploadId }))).Parts ?? [],
    [],
    'no part was kept'
  );
  const partOk = await s3.send(
    new UploadPartCommand({ Bucket: 'md5', Key: 'mp', UploadId, PartNumber: 1, Body: part, ContentMD5: md5(part) })
  );
  t.ok(partOk.ETag);
});
