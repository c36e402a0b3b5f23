import t from 'tap';
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { activate, generated, sha256Of, errorOf } from '../helpers.js';
import { listeningApp, STORAGE_VENDOR } from '../../../helpers/listening-app.js';
import { s3Client, storageUsage, createBucket } from '../../../helpers/storage-api.js';
import { multipartEtag } from '../../../../plugins/storage/multipart.js';

// A remote S3 keeps its own ETag for the joined object (the MD5 of the whole).
const keepsEtag = STORAGE_VENDOR === 'local-storage';
const md5 = (b: Buffer) => `"${createHash('md5').update(b).digest('hex')}"`;

t.test(
  'lib-storage Upload of a stream over 5 MiB: two parts, the multipart ETag, the bytes back, parts cleaned up',
  async (t) => {
    const { app } = await listeningApp(t);
    const a = await activate(app);
    const s3 = await s3Client(t, app, a);
    await createBucket(app, a, 'mpb');
    const size = 6 * 1024 * 1024 + 3;
    const up = new Upload({
      client: s3,
      params: { Bucket: 'mpb', Key: 'big/file.bin', Body: generated(size, 5), ContentType: 'application/x-test' },
      partSize: 5 * 1024 * 1024,
      queueSize: 2,
    });
    const done = await up.done();
    if (keepsEtag) t.match(done.ETag, /^"[0-9a-f]{32}-2"$/, 'md5-of-md5s-N');
    const first = await sha256Of(generated(size, 5));
    const got = await s3.send(new GetObjectCommand({ Bucket: 'mpb', Key: 'big/file.bin' }));
    t.equal(got.ETag, done.ETag, 'GET carries the multipart ETag');
    t.equal(got.ContentType, 'application/x-test', 'the content type given when the upload was created');
    t.same(await sha256Of(got.Body as Readable), first);
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'mpb', Key: 'big/file.bin' }));
    t.equal(head.ContentLength, size);
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'mpb' }));
    t.same(
      listed.Contents?.map((o) => o.Key),
      ['big/file.bin'],
      'no parts in the bucket'
    );
    t.equal((await storageUsage(app, a)).bytes_stored, size, 'the parts are no longer metered once joined');
  }
);

t.test('multipart by hand: ETag, ListParts, S3 checks on Complete, Abort, and other accounts', async (t) => {
  const { app } = await listeningApp(t);
  const a = await activate(app);
  const b = await activate(app);
  const s3 = await s3Client(t, app, a);
  const other = await s3Client(t, app, b);
  await createBucket(app, a, 'mpb');
  await createBucket(app, b, 'mpb');
  const p1 = Buffer.alloc(1024, 1);
  const p2 = Buffer.from('the last part');
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'mpb', Key: 'k' }));
  t.match(UploadId, /^mpu_/);
  const e1 = (await s3.send(new UploadPartCommand({ Bucket: 'mpb', Key: 'k', UploadId, PartNumber: 1, Body: p1 })))
    .ETag!;
  const e2 = (await s3.send(new UploadPartCommand({ Bucket: 'mpb', Key: 'k', UploadId, PartNumber: 2, Body: p2 })))
    .ETag!;
  t.equal(e1, md5(p1));
  t.equal((await storageUsage(app, a)).bytes_stored, p1.length + p2.length, 'parts are stored bytes');
  const parts = await s3.send(new ListPartsCommand({ Bucket: 'mpb', Key: 'k', UploadId }));
  t.same(
    parts.Parts?.map((p) => [p.PartNumber, p.ETag, p.Size]),
    [
      [1, e1, 1024],
      [2, e2, p2.length],
    ]
  );

  const complete = (Parts: Array<{ PartNumber: number; ETag: string }>, client = s3, Key = 'k') =>
    client.send(new CompleteMultipartUploadCommand({ Bucket: 'mpb', Key, UploadId, MultipartUpload: { Parts } }));
  t.equal(
    (
      await errorOf(
        complete([
          { PartNumber: 1, ETag: e1 },
          { PartNumber: 2, ETag: e2 },
        ])
      )
    ).name,
    'EntityTooSmall',
    'parts but the last need 5 MiB'
  );
  t.equal(
    (
      await errorOf(
        complete([
          { PartNumber: 2, ETag: e2 },
          { PartNumber: 1, ETag: e1 },
        ])
      )
    ).name,
    'InvalidPartOrder'
  );
  t.equal(
    (await errorOf(complete([{ PartNumber: 1, ETag: md5(p2) }]))).name,
    'InvalidPart',
    'an ETag that does not match'
  );
  t.equal((await errorOf(complete([{ PartNumber: 3, ETag: e1 }]))).name, 'InvalidPart', 'a part never uploaded');
  t.equal(
    (await errorOf(complete([{ PartNumber: 1, ETag: e1 }], other))).name,
    'NoSuchUpload',
    "another account's upload id"
  );
  t.equal(
    (await errorOf(complete([{ PartNumber: 1, ETag: e1 }], s3, 'other-key'))).name,
    'NoSuchUpload',
    'an upload id of another key'
  );
  t.equal(
    (await errorOf(s3.send(new HeadObjectCommand({ Bucket: 'mpb', Key: 'k' })))).name,
    'NotFound',
    'nothing committed by the refusals'
  );

  const done = await complete([{ PartNumber: 2, ETag: e2 }]);
  if (keepsEtag) t.equal(done.ETag, multipartEtag([e2]));
  if (keepsEtag)
    t.equal(done.ETag, `"${createHash('md5').update(createHash('md5').update(p2).digest()).digest('hex')}-1"`);
  t.equal(
    await (await s3.send(new GetObjectCommand({ Bucket: 'mpb', Key: 'k' }))).Body!.transformToString(),
    'the last part'
  );
  t.equal((await storageUsage(app, a)).bytes_stored, p2.length, 'the unused part went too');
  // As S3 does (ceph's s3-tests): an SDK that lost the answer sends the completion again and gets the same one.
  const again = await complete([{ PartNumber: 2, ETag: e2 }]);
  t.equal(again.ETag, done.ETag, 'a repeated completion answers 200 with the same ETag');
  t.equal(again.Key, 'k');
  t.equal((await storageUsage(app, a)).bytes_stored, p2.length, 'and stores nothing again');
  t.equal(
    (await errorOf(complete([{ PartNumber: 1, ETag: e1 }]))).name,
    'NoSuchUpload',
    'a completion of other parts: the upload is gone'
  );
  t.equal(
    (await errorOf(complete([{ PartNumber: 2, ETag: e2 }], other))).name,
    'NoSuchUpload',
    "nor is it another account's to complete"
  );
  t.equal(
    (await errorOf(complete([{ PartNumber: 2, ETag: e2 }], s3, 'other-key'))).name,
    'NoSuchUpload',
    "nor another key's"
  );
  t.equal(
    (await errorOf(s3.send(new ListPartsCommand({ Bucket: 'mpb', Key: 'k', UploadId })))).name,
    'NoSuchUpload',
    'a completed upload has no parts'
  );

  const second = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'mpb', Key: 'aborted' }));
  await s3.send(
    new UploadPartCommand({ Bucket: 'mpb', Key: 'aborted', UploadId: second.UploadId, PartNumber: 1, Body: p1 })
  );
  t.equal(
    (
      await errorOf(
        other.send(new AbortMultipartUploadCommand({ Bucket: 'mpb', Key: 'aborted', UploadId: second.UploadId }))
      )
    ).name,
    'NoSuchUpload'
  );
  await s3.send(new AbortMultipartUploadCommand({ Bucket: 'mpb', Key: 'aborted', UploadId: second.UploadId }));
  t.equal((await storageUsage(app, a)).bytes_stored, p2.length, 'abort drops the parts and their bytes');
  t.equal(
    (
      await errorOf(
        s3.send(
          new UploadPartCommand({ Bucket: 'mpb', Key: 'aborted', UploadId: second.UploadId, PartNumber: 2, Body: p1 })
        )
      )
    ).name,
    'NoSuchUpload'
  );
  const bad = await errorOf(
    s3.send(
      new UploadPartCommand({
        Bucket: 'mpb',
        Key: 'k2',
        UploadId: (await s3.send(new CreateMultipartUploadCommand({ Bucket: 'mpb', Key: 'k2' }))).UploadId,
        PartNumber: 10001,
        Body: p1,
      })
    )
  );
  t.equal(bad.name, 'InvalidArgument', 'part numbers stop at 10000');
});

t.test('deleting a bucket drops its unfinished uploads and their bytes', async (t) => {
  const { app } = await listeningApp(t);
  const a = await activate(app);
  const s3 = await s3Client(t, app, a);
  await createBucket(app, a, 'gone-bkt');
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'gone-bkt', Key: 'k' }));
  await s3.send(
    new UploadPartCommand({ Bucket: 'gone-bkt', Key: 'k', UploadId, PartNumber: 1, Body: Buffer.alloc(100) })
  );
  t.equal((await storageUsage(app, a)).bytes_stored, 100);
  const del = await app.inject({ method: 'DELETE', url: '/v1/storage/buckets/gone-bkt', headers: a.auth });
  t.equal(del.statusCode, 200, 'a bucket whose only bytes are parts counts as empty');
  t.equal((await storageUsage(app, a)).bytes_stored, 0);
  await createBucket(app, a, 'gone-bkt');
  t.equal(
    (await errorOf(s3.send(new ListPartsCommand({ Bucket: 'gone-bkt', Key: 'k', UploadId })))).name,
    'NoSuchUpload',
    'not revived by a new bucket of the same name'
  );
});

t.test('parts are capped: the object cap less the other parts, and the account total', async (t) => {
  const { app } = await listeningApp(t, {
    vendors: [],
    plugins: { storage: { tier_caps: { free: { max_object_bytes: 1000, max_total_bytes: 2500 } } } },
  });
  const a = await activate(app);
  const s3 = await s3Client(t, app, a);
  await createBucket(app, a, 'mpb');
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'mpb', Key: 'k' }));
  const part = (n: number, size: number) =>
    s3.send(new UploadPartCommand({ Bucket: 'mpb', Key: 'k', UploadId, PartNumber: n, Body: Buffer.alloc(size, n) }));
  const big = await errorOf(part(1, 1001));
  t.equal(big.name, 'EntityTooLarge');
  t.match(big.message, /object size cap/);
  await part(1, 600);
  const second = await errorOf(part(2, 600));
  t.equal(second.name, 'EntityTooLarge');
  t.match(second.message, /other parts hold 600/, second.message);
  await part(1, 500); // a part uploaded again replaces the old one
  await part(2, 500);
  t.equal((await storageUsage(app, a)).bytes_stored, 1000);
});

t.test(
  'two aborts, or two completions, at once: one wins, the other finds no such upload, the bytes are counted once',
  async (t) => {
    const { app } = await listeningApp(t);
    const a = await activate(app);
    const s3 = await s3Client(t, app, a);
    await createBucket(app, a, 'mpb');
    const part = Buffer.alloc(1000, 3);
    const started = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'mpb', Key: 'gone' }));
    await s3.send(
      new UploadPartCommand({ Bucket: 'mpb', Key: 'gone', UploadId: started.UploadId, PartNumber: 1, Body: part })
    );
    t.equal((await storageUsage(app, a)).bytes_stored, 1000);
    const aborts = await Promise.allSettled(
      [1, 2, 3].map(() =>
        s3.send(new AbortMultipartUploadCommand({ Bucket: 'mpb', Key: 'gone', UploadId: started.UploadId }))
      )
    );
    t.equal(aborts.filter((r) => r.status === 'fulfilled').length, 1, 'one abort drops the upload');
    t.same(
      aborts.filter((r) => r.status === 'rejected').map((r) => ((r as PromiseRejectedResult).reason as Error).name),
      ['NoSuchUpload', 'NoSuchUpload']
    );
    t.equal((await storageUsage(app, a)).bytes_stored, 0, 'its bytes counted gone once');

    const c = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'mpb', Key: 'once' }));
    const etag = (
      await s3.send(
        new UploadPartCommand({ Bucket: 'mpb', Key: 'once', UploadId: c.UploadId, PartNumber: 1, Body: part })
      )
    ).ETag!;
    const completes = await Promise.allSettled(
      [1, 2].map(() =>
        s3.send(
          new CompleteMultipartUploadCommand({
            Bucket: 'mpb',
            Key: 'once',
            UploadId: c.UploadId,
            MultipartUpload: { Parts: [{ PartNumber: 1, ETag: etag }] },
          })
        )
      )
    );
    t.equal(completes.filter((r) => r.status === 'fulfilled').length, 1, 'one completion commits the object');
    t.equal(
      ((completes.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason as Error).name,
      'NoSuchUpload'
    );
    t.equal(
      await (await s3.send(new GetObjectCommand({ Bucket: 'mpb', Key: 'once' }))).Body!.transformToString(),
      part.toString()
    );
    t.equal((await storageUsage(app, a)).bytes_stored, 1000, 'the object once, the part gone');
  }
);
