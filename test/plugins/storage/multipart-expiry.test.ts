import t from 'tap';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  ListPartsCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { FastifyInstance } from 'fastify';
import { activate, errorOf } from './helpers.js';
import { listeningApp } from '../../helpers/listening-app.js';
import { s3Client, storageUsage, createBucket } from '../../helpers/storage-api.js';
import { makeApp } from '../../helpers/app.js';
import { MultipartExpiry } from '../../../plugins/storage/multipart-expiry.js';
import { UPLOADS_BUCKET } from '../../../plugins/storage/multipart.js';
import { StorageService } from '../../../plugins/storage/service.js';
import { CredentialStore } from '../../../plugins/storage/credentials.js';
import type { StorageConfig } from '../../../plugins/storage/config.js';

const WEEK_S = 7 * 86_400;

/** A storage service and sweep on the app's database and vendors, as another node would have. */
function sweeper(app: FastifyInstance) {
  const config = app.svc.areas.find((x) => x.def.name === 'storage')!.config as StorageConfig;
  const storage = new StorageService(app.svc, config, new CredentialStore(app.svc.db, app.svc.masterKey));
  return { storage, expiry: new MultipartExpiry(storage, app.svc.log) };
}

async function startUpload(s3: S3Client, Bucket: string, Key: string, Body: Buffer): Promise<string> {
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket, Key }));
  await s3.send(new UploadPartCommand({ Bucket, Key, UploadId, PartNumber: 1, Body }));
  return UploadId!;
}

/** Make an upload older than the expiry, as if it had been created `seconds` ago. */
async function age(app: FastifyInstance, uploadId: string, seconds = WEEK_S + 1) {
  await app.svc.db
    .updateTable('storage_multipart_uploads')
    .set({ created_at: Date.now() - seconds * 1000 })
    .where('upload_id', '=', uploadId)
    .execute();
}

const rows = async (app: FastifyInstance, uploadId: string) => ({
  uploads: (
    await app.svc.db
      .selectFrom('storage_multipart_uploads')
      .select('upload_id')
      .where('upload_id', '=', uploadId)
      .execute()
  ).length,
  parts: (
    await app.svc.db
      .selectFrom('storage_multipart_parts')
      .select('upload_id')
      .where('upload_id', '=', uploadId)
      .execute()
  ).length,
});

t.test(
  'an expired upload answers NoSuchUpload, and the sweep drops it, its part and its bytes; a fresh one stays',
  async (t) => {
    const { app } = await listeningApp(t);
    const a = await activate(app);
    const s3 = await s3Client(t, app, a);
    await createBucket(app, a, 'exp');
    const { storage, expiry } = sweeper(app);
    const old = await startUpload(s3, 'exp', 'old', Buffer.alloc(100, 1));
    const fresh = await startUpload(s3, 'exp', 'fresh', Buffer.alloc(40, 2));
    t.equal((await storageUsage(app, a)).bytes_stored, 140);
    t.equal(await expiry.sweep(), 0, 'nothing is old yet');

    await age(app, old);
    const noSuch = async (what: string, p: Promise<unknown>) => t.equal((await errorOf(p)).name, 'NoSuchUpload', what);
    await noSuch(
      'ListParts before the sweep',
      s3.send(new ListPartsCommand({ Bucket: 'exp', Key: 'old', UploadId: old }))
    );

    t.equal(await expiry.sweep(), 1);
    t.same(await rows(app, old), { uploads: 0, parts: 0 }, 'the rows are gone');
    const b = (await storage.findBucket(a.account_id, 'exp'))!;
    t.equal(await storage.head({ ...b, name: UPLOADS_BUCKET }, `${old}/1`), null, 'the part is gone from the vendor');
    t.equal((await storageUsage(app, a)).bytes_stored, 40, 'its bytes are no longer stored');
    await noSuch(
      'UploadPart',
      s3.send(
        new UploadPartCommand({ Bucket: 'exp', Key: 'old', UploadId: old, PartNumber: 2, Body: Buffer.alloc(10) })
      )
    );
    await noSuch('ListParts', s3.send(new ListPartsCommand({ Bucket: 'exp', Key: 'old', UploadId: old })));
    await noSuch(
      'CompleteMultipartUpload',
      s3.send(
        new CompleteMultipartUploadCommand({
          Bucket: 'exp',
          Key: 'old',
          UploadId: old,
          MultipartUpload: { Parts: [{ PartNumber: 1, ETag: '"x"' }] },
        })
      )
    );
    await noSuch(
      'AbortMultipartUpload',
      s3.send(new AbortMultipartUploadCommand({ Bucket: 'exp', Key: 'old', UploadId: old }))
    );

    t.equal(await expiry.sweep(), 0, 'a second sweep finds nothing and fails on nothing');
    const parts = await s3.send(new ListPartsCommand({ Bucket: 'exp', Key: 'fresh', UploadId: fresh }));
    t.same(
      parts.Parts?.map((p) => [p.PartNumber, p.Size]),
      [[1, 40]],
      'the fresh upload is untouched'
    );
    await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: 'exp',
        Key: 'fresh',
        UploadId: fresh,
        MultipartUpload: { Parts: [{ PartNumber: 1, ETag: parts.Parts![0].ETag }] },
      })
    );
    t.equal((await storageUsage(app, a)).bytes_stored, 40, 'and completes');
  }
);

t.test('sweeps at once (several nodes) drop each upload once and count its bytes gone once', async (t) => {
  const { app } = await listeningApp(t);
  const a = await activate(app);
  const s3 = await s3Client(t, app, a);
  await createBucket(app, a, 'exp');
  const ids = [
    await startUpload(s3, 'exp', 'one', Buffer.alloc(100)),
    await startUpload(s3, 'exp', 'two', Buffer.alloc(50)),
  ];
  await startUpload(s3, 'exp', 'kept', Buffer.alloc(7));
  for (const id of ids) await age(app, id);
  // Read before each sweep: that writes this node's meter, which the sweeps' meters add to.
  t.equal((await storageUsage(app, a)).bytes_stored, 157);
  const nodes = [sweeper(app), sweeper(app), sweeper(app)];
  const dropped = await Promise.all(nodes.map((n) => n.expiry.sweep()));
  t.equal(
    dropped.reduce((s, n) => s + n, 0),
    2,
    `each upload dropped by one node (${dropped})`
  );
  t.equal((await storageUsage(app, a)).bytes_stored, 7);
  // A part already deleted (by hand, or a drop that stopped half way) is no error.
  const third = await startUpload(s3, 'exp', 'three', Buffer.alloc(30));
  t.equal((await storageUsage(app, a)).bytes_stored, 37);
  const b = (await nodes[0].storage.findBucket(a.account_id, 'exp'))!;
  await nodes[0].storage.deleteObject({ ...b, name: UPLOADS_BUCKET }, `${third}/1`);
  await nodes[0].storage.usage.flush();
  await age(app, third);
  t.equal(await nodes[1].expiry.sweep(), 1);
  t.same(await rows(app, third), { uploads: 0, parts: 0 });
  t.equal((await storageUsage(app, a)).bytes_stored, 7);
});

t.test('an upload whose bucket row is gone: its parts are found on the vendor and its rows deleted', async (t) => {
  const { app } = await listeningApp(t);
  const a = await activate(app);
  const s3 = await s3Client(t, app, a);
  await createBucket(app, a, 'half-gone');
  const id = await startUpload(s3, 'half-gone', 'k', Buffer.alloc(64));
  t.equal((await storageUsage(app, a)).bytes_stored, 64);
  const b = (await sweeper(app).storage.findBucket(a.account_id, 'half-gone'))!;
  // A bucket deletion that stopped after the bucket row went and before its uploads did.
  await app.svc.db.deleteFrom('storage_buckets').where('bucket_id', '=', b.bucket_id).execute();
  await age(app, id);
  const { storage, expiry } = sweeper(app);
  t.equal(await expiry.sweep(), 1);
  t.same(await rows(app, id), { uploads: 0, parts: 0 });
  t.equal(await storage.head({ ...b, name: UPLOADS_BUCKET }, `${id}/1`), null, 'the part is gone from the vendor');
  t.equal((await storageUsage(app, a)).bytes_stored, 0);
});

t.test(
  'a started sweeper sweeps at once, not only after its interval (a gateway restarted more often would never sweep)',
  async (t) => {
    const { app } = await listeningApp(t);
    const a = await activate(app);
    const s3 = await s3Client(t, app, a);
    await createBucket(app, a, 'at-start');
    const id = await startUpload(s3, 'at-start', 'k', Buffer.alloc(10));
    await age(app, id);
    const { expiry } = sweeper(app);
    t.equal(expiry.intervalMs, 3_600_000, 'the next sweep would be an hour away');
    expiry.start();
    await expiry.stop(); // lets the sweep under way finish
    t.same(await rows(app, id), { uploads: 0, parts: 0 }, 'the expired upload went when the sweeper started');
  }
);

t.test(
  'a completed upload is remembered for a repeated completion until the expiry, then forgotten by the sweep',
  async (t) => {
    const { app } = await listeningApp(t);
    const a = await activate(app);
    const s3 = await s3Client(t, app, a);
    await createBucket(app, a, 'done');
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'done', Key: 'k' }));
    const { ETag } = await s3.send(
      new UploadPartCommand({ Bucket: 'done', Key: 'k', UploadId, PartNumber: 1, Body: Buffer.alloc(5, 1) })
    );
    const complete = () =>
      s3.send(
        new CompleteMultipartUploadCommand({
          Bucket: 'done',
          Key: 'k',
          UploadId,
          MultipartUpload: { Parts: [{ PartNumber: 1, ETag }] },
        })
      );
    const first = await complete();
    const { expiry } = sweeper(app);
    t.equal(await expiry.sweep(), 0);
    t.equal((await complete()).ETag, first.ETag, 'a fresh completion is remembered through a sweep');
    await app.svc.db
      .updateTable('storage_multipart_completed')
      .set({ completed_at: Date.now() - (WEEK_S + 1) * 1000 })
      .where('upload_id', '=', UploadId!)
      .execute();
    t.equal((await errorOf(complete())).name, 'NoSuchUpload', 'past the expiry it is not answered again');
    await expiry.sweep();
    const left = await app.svc.db
      .selectFrom('storage_multipart_completed')
      .select('upload_id')
      .where('upload_id', '=', UploadId!)
      .execute();
    t.equal(left.length, 0, 'and the sweep forgot it');
  }
);

t.test(
  'multipart_expire_seconds: 7 days by default, at least 60, and the sweep runs every quarter of it, at most hourly',
  async (t) => {
    const { app } = await makeApp(t, { vendors: [] });
    t.equal(sweeper(app).storage.config.multipart_expire_seconds, WEEK_S);
    t.equal(sweeper(app).expiry.intervalMs, 3_600_000);
    const { app: short } = await makeApp(t, { vendors: [], plugins: { storage: { multipart_expire_seconds: 600 } } });
    t.equal(sweeper(short).expiry.intervalMs, 150_000);
    await t.rejects(makeApp(t, { plugins: { storage: { multipart_expire_seconds: 59 } } }), {
      name: 'ConfigError',
      message: /multipart_expire_seconds/,
    });
  }
);
