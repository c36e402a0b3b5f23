import t from 'tap';
import {
  PutObjectCommand,
  GetObjectCommand,
  DeleteObjectCommand,
  CopyObjectCommand,
  HeadObjectCommand,
  CreateMultipartUploadCommand,
  UploadPartCommand,
  CompleteMultipartUploadCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { activate, errorOf } from '../helpers.js';
import { listeningApp } from '../../../helpers/listening-app.js';
import { createBucket, s3Client, storageUsage } from '../../../helpers/storage-api.js';

// database-independent: conditions checked by the vendor; multipart rows are s3/multipart.test.ts's, on both.

// Conditional writes (If-None-Match: * to create, If-Match to replace or delete one version)
// are what clients build locks on: Terraform's S3 lockfile takes its lock with a PutObject
// If-None-Match: *. The vendor checks them atomically with the write (local-storage in the
// transaction that commits the object; s3 by passing them on, here to a second gateway), so of
// racing writers exactly one wins. These run on both vendors (SVC_TEST_STORAGE=s3).

// One gateway for the file (two with SVC_TEST_STORAGE=s3); each test has an account of its own.
let shared: ReturnType<typeof listeningApp> | undefined;

async function setup(t: Tap.Test) {
  const { app } = await (shared ??= listeningApp(t.parent ?? t));
  const a = await activate(app);
  await createBucket(app, a, 'locks');
  const s3 = await s3Client(t, app, a);
  const content = async (Key: string) =>
    (await s3.send(new GetObjectCommand({ Bucket: 'locks', Key }))).Body!.transformToString();
  return { app, a, s3, content };
}

const put = (s3: S3Client, Key: string, Body: string | Buffer, cond: { IfNoneMatch?: string; IfMatch?: string } = {}) =>
  s3.send(new PutObjectCommand({ Bucket: 'locks', Key, Body, ...cond }));

t.test('PutObject If-None-Match: * creates once; If-Match replaces only the version named', async (t) => {
  const { app, a, s3, content } = await setup(t);
  const first = await put(s3, 'state.tflock', 'held by A', { IfNoneMatch: '*' });
  t.ok(first.ETag, 'the key was free: created');
  const stored = (await storageUsage(app, a)).bytes_stored;

  const taken = await errorOf(put(s3, 'state.tflock', 'held by B', { IfNoneMatch: '*' }));
  t.equal(taken.name, 'PreconditionFailed');
  t.equal(taken.$metadata.httpStatusCode, 412);
  t.equal(await content('state.tflock'), 'held by A', 'the lock was not taken over');

  const stale = await errorOf(put(s3, 'state.tflock', 'B', { IfMatch: '"0123456789abcdef0123456789abcdef"' }));
  t.equal(stale.name, 'PreconditionFailed', 'If-Match with another ETag');
  const missing = await errorOf(put(s3, 'nothing-here', 'B', { IfMatch: first.ETag }));
  t.equal(missing.name, 'NoSuchKey', 'If-Match with no object: 404, as S3');
  t.equal(
    (await errorOf(s3.send(new HeadObjectCommand({ Bucket: 'locks', Key: 'nothing-here' })))).$metadata.httpStatusCode,
    404,
    'and nothing stored'
  );
  t.equal((await storageUsage(app, a)).bytes_stored, stored, 'refused writes store and meter nothing');

  const swapped = await put(s3, 'state.tflock', 'released by A', { IfMatch: first.ETag });
  t.not(swapped.ETag, first.ETag);
  t.equal(await content('state.tflock'), 'released by A', 'If-Match with the current ETag replaces');
  t.equal(
    (await errorOf(put(s3, 'state.tflock', 'again', { IfMatch: first.ETag }))).name,
    'PreconditionFailed',
    'the old ETag no longer matches'
  );
  await put(s3, 'state.tflock', 'weak and listed', { IfMatch: `"nope", W/${swapped.ETag}` });
  t.equal(await content('state.tflock'), 'weak and listed', 'a list, and a weak tag, compare by value');
});

t.test('racing creates of one key: exactly one wins, small and large bodies', async (t) => {
  const { s3, content } = await setup(t);
  for (const [key, size] of [
    ['small-lock', 10],
    ['large-lock', 100 * 1024],
  ] as const) {
    const bodies = Array.from({ length: 8 }, (_, i) => Buffer.alloc(size, 65 + i));
    const outcomes = await Promise.allSettled(bodies.map((b) => put(s3, key, b, { IfNoneMatch: '*' })));
    const won = outcomes.flatMap((o, i) => (o.status === 'fulfilled' ? [i] : []));
    t.equal(won.length, 1, `${key}: one writer won`);
    t.same(
      outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason.name),
      Array(7).fill('PreconditionFailed'),
      `${key}: the others got 412`
    );
    t.equal(await content(key), bodies[won[0]].toString(), `${key}: the object is the winner's`);
  }
});

t.test('DeleteObject If-Match deletes only the version named', async (t) => {
  const { app, a, s3, content } = await setup(t);
  const { ETag } = await put(s3, 'k', 'v1');
  const wrong = await errorOf(
    s3.send(new DeleteObjectCommand({ Bucket: 'locks', Key: 'k', IfMatch: '"ffffffffffffffffffffffffffffffff"' }))
  );
  t.equal(wrong.name, 'PreconditionFailed');
  t.equal(await content('k'), 'v1', 'not deleted');
  t.equal(
    (await errorOf(s3.send(new DeleteObjectCommand({ Bucket: 'locks', Key: 'gone', IfMatch: ETag })))).name,
    'NoSuchKey'
  );
  await s3.send(new DeleteObjectCommand({ Bucket: 'locks', Key: 'k', IfMatch: ETag }));
  t.equal((await errorOf(s3.send(new HeadObjectCommand({ Bucket: 'locks', Key: 'k' })))).$metadata.httpStatusCode, 404);
  t.equal((await storageUsage(app, a)).bytes_stored, 0, 'the delete was metered');
  const unsupported = await errorOf(s3.send(new DeleteObjectCommand({ Bucket: 'locks', Key: 'k', IfMatchSize: 2 })));
  t.equal(unsupported.name, 'NotImplemented', 'conditions S3 has only on directory buckets are refused');
});

t.test('CompleteMultipartUpload and CopyObject take the destination conditions', async (t) => {
  const { s3, content } = await setup(t);
  const held = await put(s3, 'state.tflock', 'held by A');
  await put(s3, 'other', 'another body');
  const copyCreate = await errorOf(
    s3.send(
      new CopyObjectCommand({ Bucket: 'locks', Key: 'state.tflock', CopySource: 'locks/other', IfNoneMatch: '*' })
    )
  );
  t.equal(copyCreate.name, 'PreconditionFailed');
  t.equal(await content('state.tflock'), 'held by A', 'not copied over');
  await s3.send(new CopyObjectCommand({ Bucket: 'locks', Key: 'copied', CopySource: 'locks/other', IfNoneMatch: '*' }));
  t.equal(await content('copied'), 'another body', 'a copy to a free key is made');
  const sourceCond = await errorOf(
    s3.send(
      new CopyObjectCommand({ Bucket: 'locks', Key: 'x', CopySource: 'locks/other', CopySourceIfMatch: '"nope"' })
    )
  );
  t.equal(sourceCond.name, 'NotImplemented');
  t.match(sourceCond.message, /x-amz-copy-source-if-match on CopyObject/);

  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'locks', Key: 'state.tflock' }));
  const part = await s3.send(
    new UploadPartCommand({ Bucket: 'locks', Key: 'state.tflock', UploadId, PartNumber: 1, Body: 'multipart B' })
  );
  const parts = { Parts: [{ PartNumber: 1, ETag: part.ETag }] };
  const complete = await errorOf(
    s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: 'locks',
        Key: 'state.tflock',
        UploadId,
        IfNoneMatch: '*',
        MultipartUpload: parts,
      })
    )
  );
  t.equal(complete.name, 'PreconditionFailed');
  t.equal(await content('state.tflock'), 'held by A', 'not completed over');
  await s3.send(
    new CompleteMultipartUploadCommand({
      Bucket: 'locks',
      Key: 'state.tflock',
      UploadId,
      IfMatch: held.ETag,
      MultipartUpload: parts,
    })
  );
  t.equal(
    await content('state.tflock'),
    'multipart B',
    'the upload was kept for a retry, and completes with the right ETag'
  );
});

t.test('conditions no vendor is asked to check are refused before anything is stored', async (t) => {
  const { s3, content } = await setup(t);
  await put(s3, 'k', 'v1');
  const notStar = await errorOf(put(s3, 'k', 'v2', { IfNoneMatch: '"abc"' }));
  t.equal(notStar.name, 'NotImplemented');
  t.equal(notStar.$metadata.httpStatusCode, 501);
  t.equal(
    notStar.message,
    'Conditional writes (If-None-Match on PutObject) are not supported with a value other than *.'
  );
  const both = await errorOf(put(s3, 'k', 'v2', { IfNoneMatch: '*', IfMatch: '"abc"' }));
  t.equal(both.name, 'NotImplemented');
  t.equal(await content('k'), 'v1');
});
