import t from 'tap';
import {
  PutObjectCommand, GetObjectCommand, DeleteObjectCommand, CopyObjectCommand, HeadObjectCommand,
  CreateMultipartUploadCommand, UploadPartCommand, CompleteMultipartUploadCommand,
} from '@aws-sdk/client-s3';
import { listeningApp, activate, createBucket, s3Client, errorOf, storageUsage } from '../helpers.js';

// Conditional writes cannot be done atomically on the storage contract: they are refused
// (501 NotImplemented naming the header) before anything is read or stored, never done as
// plain writes, which would let two holders of a "lock" both win.

t.test('conditional PutObject, DeleteObject, CopyObject and CompleteMultipartUpload: 501, nothing changed', async (t) => {
  const { app } = await listeningApp(t);
  const a = await activate(app);
  await createBucket(app, a, 'locks');
  const s3 = await s3Client(t, app, a);
  const { ETag } = await s3.send(new PutObjectCommand({ Bucket: 'locks', Key: 'state.tflock', Body: 'held by A' }));
  const content = async (Key = 'state.tflock') => (await s3.send(new GetObjectCommand({ Bucket: 'locks', Key }))).Body!.transformToString();
  const stored = (await storageUsage(app, a)).bytes_stored;

  const create = await errorOf(s3.send(new PutObjectCommand({ Bucket: 'locks', Key: 'state.tflock', Body: 'held by B', IfNoneMatch: '*' })));
  t.equal(create.name, 'NotImplemented');
  t.equal(create.$metadata.httpStatusCode, 501);
  t.equal(create.message, 'Conditional writes (If-None-Match on PutObject) are not supported by this endpoint.');
  t.equal(await content(), 'held by A', 'the lock was not taken over');

  const fresh = await errorOf(s3.send(new PutObjectCommand({ Bucket: 'locks', Key: 'new', Body: 'x', IfNoneMatch: '*' })));
  t.equal(fresh.name, 'NotImplemented', 'refused even where it would have held');
  t.equal((await errorOf(s3.send(new HeadObjectCommand({ Bucket: 'locks', Key: 'new' })))).$metadata.httpStatusCode, 404);

  const swap = await errorOf(s3.send(new PutObjectCommand({ Bucket: 'locks', Key: 'state.tflock', Body: 'B', IfMatch: ETag })));
  t.match(swap.message, /If-Match on PutObject/);

  const del = await errorOf(s3.send(new DeleteObjectCommand({ Bucket: 'locks', Key: 'state.tflock', IfMatch: ETag })));
  t.equal(del.name, 'NotImplemented');
  t.match(del.message, /If-Match on DeleteObject/);
  t.equal(await content(), 'held by A', 'not deleted');

  await s3.send(new PutObjectCommand({ Bucket: 'locks', Key: 'other', Body: 'another body' }));
  const copy = await errorOf(s3.send(new CopyObjectCommand({ Bucket: 'locks', Key: 'state.tflock', CopySource: 'locks/other', CopySourceIfMatch: '"nope"' })));
  t.equal(copy.name, 'NotImplemented');
  t.match(copy.message, /x-amz-copy-source-if-match on CopyObject/);
  const copyCreate = await errorOf(s3.send(new CopyObjectCommand({ Bucket: 'locks', Key: 'state.tflock', CopySource: 'locks/other', IfNoneMatch: '*' } as any)));
  t.equal(copyCreate.name, 'NotImplemented');
  t.equal(await content(), 'held by A', 'not copied over');

  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'locks', Key: 'state.tflock' }));
  const part = await s3.send(new UploadPartCommand({ Bucket: 'locks', Key: 'state.tflock', UploadId, PartNumber: 1, Body: 'multipart B' }));
  const complete = await errorOf(s3.send(new CompleteMultipartUploadCommand({
    Bucket: 'locks', Key: 'state.tflock', UploadId, IfNoneMatch: '*', MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] },
  })));
  t.equal(complete.name, 'NotImplemented');
  t.match(complete.message, /If-None-Match on CompleteMultipartUpload/);
  t.equal(await content(), 'held by A', 'not completed over');
  const plain = await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'locks', Key: 'state.tflock', UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] } }));
  t.ok(plain.ETag, 'the upload is still there to complete without the condition');
  t.equal(await content(), 'multipart B');
  t.equal((await storageUsage(app, a)).bytes_stored, stored + 'another body'.length + 'multipart B'.length - 'held by A'.length, 'the refused writes stored nothing');
});
