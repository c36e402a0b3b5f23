import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { cliCommand } from '../helpers/cli-command.js';
import { startGateway } from '../helpers/gateway-process.js';
import { sdkClient } from '../helpers/storage-api.js';

// database-independent: the bundled CLI loading the S3 paths; the rows behind them are the storage tests', on both.

// The S3 endpoint through the real CLI process: the bundle (dist/bin/svc-gateway.js, made by
// scripts/bundle-cli.mjs) when dist/ is built and fresh, as CI and `npx svc-gateway` run it.
// Bundling changed how a CommonJS package loaded on first use is seen (busboy's named export
// was gone, and every form upload failed), which tests on the sources never see.
t.setTimeout(120_000);

t.test('the AWS SDK and a createPresignedPost form against the gateway process', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 's3-process-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  t.comment(`the gateway runs ${cliCommand().at(-1)}`);
  const gw = await startGateway(t, dir, { data_dir: dir, database: { url: `sqlite:${join(dir, 'gateway.db')}` } });
  const call = async (path: string, auth: string, body: unknown) => {
    const res = await fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(auth ? { authorization: `Bearer ${auth}` } : {}) },
      body: JSON.stringify(body),
    });
    const json = await res.json();
    t.equal(res.status, 200, `${path}: ${JSON.stringify(json)}`);
    return json;
  };
  const { primary_api_key: key } = await call('/v1/activate', '', {});
  await call('/v1/storage/buckets', key, { bucket: 'forms' });
  const c = await call('/v1/storage/credentials', key, {});
  const s3 = sdkClient(t, c);

  await s3.send(new PutObjectCommand({ Bucket: 'forms', Key: 'put.txt', Body: 'signed put' }));
  const got = await s3.send(new GetObjectCommand({ Bucket: 'forms', Key: 'put.txt' }));
  t.equal(await got.Body!.transformToString(), 'signed put');

  const { url, fields } = await createPresignedPost(s3, {
    Bucket: 'forms',
    Key: 'in/${filename}',
    Expires: 60,
    Conditions: [['content-length-range', 1, 100]],
    Fields: { success_action_status: '201' },
  });
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.append('file', new Blob([Buffer.from('a form upload')]), 'note.txt');
  const res = await fetch(url, { method: 'POST', body: form });
  const xml = await res.text();
  t.equal(res.status, 201, xml);
  t.match(xml, /<Key>in\/note\.txt<\/Key>/);
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'forms' }));
  t.same(listed.Contents?.map((o) => [o.Key, o.Size]).sort(), [
    ['in/note.txt', 13],
    ['put.txt', 10],
  ]);
  const read = await s3.send(new GetObjectCommand({ Bucket: 'forms', Key: 'in/note.txt' }));
  t.equal(await read.Body!.transformToString(), 'a form upload');
});
