import t from 'tap';
import { PutObjectCommand, HeadObjectCommand, ListObjectsV2Command, ListObjectsCommand } from '@aws-sdk/client-s3';
import { activate } from '../helpers.js';
import { listeningApp } from '../../../helpers/listening-app.js';
import { createBucket, s3Client } from '../../../helpers/storage-api.js';

// database-independent: listing times from the vendor; no row of its own.

// Listings give LastModified at whole seconds, as S3 does and as HEAD's Last-Modified is:
// a sync tool comparing the two must see the same time.

t.test('ListObjects(V2) LastModified equals HeadObject Last-Modified, at whole seconds', async (t) => {
  const { app } = await listeningApp(t);
  const a = await activate(app);
  await createBucket(app, a, 'times');
  const s3 = await s3Client(t, app, a);
  for (let i = 0; i < 8; i++) await s3.send(new PutObjectCommand({ Bucket: 'times', Key: `k${i}`, Body: `body ${i}` }));
  const v2 = await s3.send(new ListObjectsV2Command({ Bucket: 'times' }));
  const v1 = await s3.send(new ListObjectsCommand({ Bucket: 'times' }));
  t.equal(v2.Contents?.length, 8);
  for (const [i, o] of (v2.Contents ?? []).entries()) {
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'times', Key: o.Key }));
    t.equal(o.LastModified!.getTime() % 1000, 0, `${o.Key} listed at whole seconds`);
    t.equal(o.LastModified!.getTime(), head.LastModified!.getTime(), `${o.Key}: the listing and HEAD agree`);
    t.equal(v1.Contents![i].LastModified!.getTime(), head.LastModified!.getTime(), `${o.Key}: V1 too`);
  }
});
