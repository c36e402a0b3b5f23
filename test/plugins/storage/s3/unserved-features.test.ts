import t from 'tap';
import {
  CreateBucketCommand,
  DeleteObjectsCommand,
  GetBucketPolicyStatusCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { activate, errorOf } from '../helpers.js';
import { listeningApp } from '../../../helpers/listening-app.js';
import { createBucket, s3Client } from '../../../helpers/storage-api.js';

// database-independent: features refused before any write; the owner's rows are api.test.ts's, on both.

// S3 features a client may rely on (WORM storage, tags, storage classes, an owner check,
// conditional deletes, part reads): each is served or refused with 501 naming it, never
// accepted and dropped. Through the real AWS SDK.

const refusal = async (p: Promise<unknown>) => {
  const e = await errorOf(p);
  return { status: e.$metadata.httpStatusCode, name: e.name, message: e.message };
};

t.test('features the endpoint does not have are refused, naming them, and change nothing', async (t) => {
  const { app } = await listeningApp(t);
  const a = await activate(app);
  const s3 = await s3Client(t, app, a);
  await createBucket(app, a, 'plain');
  await s3.send(new PutObjectCommand({ Bucket: 'plain', Key: 'keep.txt', Body: 'keep' }));

  const locked = await refusal(s3.send(new CreateBucketCommand({ Bucket: 'worm', ObjectLockEnabledForBucket: true })));
  t.match(locked, { status: 501, name: 'NotImplemented', message: /object lock/i });
  t.equal((await errorOf(s3.send(new HeadBucketCommand({ Bucket: 'worm' })))).$metadata.httpStatusCode, 404);

  const puts: Array<[string, Record<string, unknown>, RegExp]> = [
    ['retention', { ObjectLockMode: 'COMPLIANCE', ObjectLockRetainUntilDate: new Date(Date.now() + 864e5) }, /lock/i],
    ['legal hold', { ObjectLockLegalHoldStatus: 'ON' }, /legal-hold/i],
    ['tagging', { Tagging: 'team=a' }, /x-amz-tagging/],
    ['storage class', { StorageClass: 'GLACIER' }, /x-amz-storage-class/],
  ];
  for (const [what, extra, named] of puts) {
    const r = await refusal(
      s3.send(new PutObjectCommand({ Bucket: 'plain', Key: `${what}.txt`, Body: 'x', ...extra }))
    );
    t.match(r, { status: 501, name: 'NotImplemented', message: named }, what);
    t.equal(
      (await errorOf(s3.send(new HeadObjectCommand({ Bucket: 'plain', Key: `${what}.txt` })))).$metadata.httpStatusCode,
      404,
      `${what}: nothing stored`
    );
  }
  const standard = await s3.send(
    new PutObjectCommand({ Bucket: 'plain', Key: 'std.txt', Body: 'x', StorageClass: 'STANDARD' })
  );
  t.ok(standard.ETag, 'STANDARD is what every object is');

  const policy = await refusal(s3.send(new GetBucketPolicyStatusCommand({ Bucket: 'plain' })));
  t.match(policy, { status: 501, name: 'NotImplemented', message: /policyStatus/ }, 'not a ListObjects');

  const part = await refusal(s3.send(new GetObjectCommand({ Bucket: 'plain', Key: 'keep.txt', PartNumber: 1 })));
  t.match(part, { status: 501, name: 'NotImplemented', message: /partNumber/ });

  const maxBuckets = await refusal(s3.send(new ListBucketsCommand({ MaxBuckets: 1 })));
  t.match(maxBuckets, { status: 501, name: 'NotImplemented', message: /max-buckets/ });

  const conditional = await refusal(
    s3.send(new DeleteObjectsCommand({ Bucket: 'plain', Delete: { Objects: [{ Key: 'keep.txt', ETag: '"nope"' }] } }))
  );
  t.match(conditional, { status: 501, name: 'NotImplemented', message: /ETag/ });
  const kept = await s3.send(new GetObjectCommand({ Bucket: 'plain', Key: 'keep.txt' }));
  t.equal(await kept.Body!.transformToString(), 'keep', 'nothing deleted');
});

t.test('x-amz-expected-bucket-owner: another account is 403 AccessDenied, the owner passes', async (t) => {
  const { app } = await listeningApp(t);
  const a = await activate(app);
  const b = await activate(app);
  const s3 = await s3Client(t, app, a);
  await createBucket(app, a, 'owned');
  const other = await refusal(
    s3.send(new PutObjectCommand({ Bucket: 'owned', Key: 'x.txt', Body: 'x', ExpectedBucketOwner: b.account_id }))
  );
  t.match(other, { status: 403, name: 'AccessDenied' });
  t.equal(
    (await errorOf(s3.send(new HeadObjectCommand({ Bucket: 'owned', Key: 'x.txt' })))).$metadata.httpStatusCode,
    404,
    'nothing stored'
  );
  const listed = await refusal(
    s3.send(new ListObjectsV2Command({ Bucket: 'owned', ExpectedBucketOwner: '123456789012' }))
  );
  t.match(listed, { status: 403, name: 'AccessDenied' });
  await s3.send(new PutObjectCommand({ Bucket: 'owned', Key: 'y.txt', Body: 'y', ExpectedBucketOwner: a.account_id }));
  t.ok(await s3.send(new HeadObjectCommand({ Bucket: 'owned', Key: 'y.txt', ExpectedBucketOwner: a.account_id })));
});

t.test('ListObjectsV2 FetchOwner: each object names its owner', async (t) => {
  const { app } = await listeningApp(t);
  const a = await activate(app);
  const s3 = await s3Client(t, app, a);
  await createBucket(app, a, 'owners');
  await s3.send(new PutObjectCommand({ Bucket: 'owners', Key: 'o.txt', Body: 'o' }));
  const withOwner = await s3.send(new ListObjectsV2Command({ Bucket: 'owners', FetchOwner: true }));
  t.same(withOwner.Contents?.[0].Owner, { ID: a.account_id });
  const without = await s3.send(new ListObjectsV2Command({ Bucket: 'owners' }));
  t.equal(without.Contents?.[0].Owner, undefined, 'as S3: no owner unless asked');
});
