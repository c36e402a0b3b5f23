import t from 'tap';
import { request } from 'node:http';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { activate } from '../helpers.js';
import { listeningApp } from '../../../helpers/listening-app.js';
import { createBucket, s3Client, s3Credentials } from '../../../helpers/storage-api.js';
import { presignUrl } from '../../../../core/capabilities/storage/sigv4.js';

// database-independent: 100-continue after authentication; the key rows are api.test.ts's, on both.

// `Expect: 100-continue`: the 100 comes once the request is authenticated, never before (a
// refused client must not send its body), and a signed one goes through.

interface Sent {
  status: number;
  continued: boolean;
  body: string;
}

/** A request with `Expect: 100-continue` whose body is written only on a 100 (Node's way). */
function expecting(url: string, method: string, headers: Record<string, string>, body: string): Promise<Sent> {
  return new Promise((resolve, reject) => {
    let continued = false;
    const req = request(url, {
      method,
      headers: { ...headers, expect: '100-continue', 'content-length': String(Buffer.byteLength(body)) },
    });
    req.on('continue', () => {
      continued = true;
      req.end(body);
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, continued, body: text }));
    });
    req.on('error', reject);
    req.flushHeaders();
  });
}

t.test('S3: 100 Continue only after the signature is checked', async (t) => {
  const { app } = await listeningApp(t);
  const a = await activate(app);
  await createBucket(app, a, 'cont');
  const c = await s3Credentials(app, a);
  const presigned = (secret: string) =>
    presignUrl({
      method: 'PUT',
      endpoint: c.endpoint,
      bucket: 'cont',
      key: 'up.txt',
      region: c.region,
      accessKeyId: c.access_key_id,
      secret,
      expiresSeconds: 60,
    });
  const forged = await expecting(presigned('not-the-secret'), 'PUT', {}, 'forged body');
  t.equal(forged.status, 403, forged.body);
  t.match(forged.body, /SignatureDoesNotMatch/);
  t.notOk(forged.continued, 'no 100 before the refusal');
  const signed = await expecting(presigned(c.secret_access_key), 'PUT', {}, 'the body');
  t.equal(signed.status, 200, signed.body);
  t.ok(signed.continued, 'a 100, then the body');
  const s3 = await s3Client(t, app, a);
  const got = await s3.send(new GetObjectCommand({ Bucket: 'cont', Key: 'up.txt' }));
  t.equal(await got.Body!.transformToString(), 'the body');
});

t.test('API: 100 Continue only after the key is checked', async (t) => {
  const { app, base } = await listeningApp(t);
  const a = await activate(app);
  const json = { 'content-type': 'application/json' };
  const refused = await expecting(
    `${base}/v1/account/keys`,
    'POST',
    { ...json, authorization: 'Bearer sk_live_no' },
    '{}'
  );
  t.equal(refused.status, 401);
  t.notOk(refused.continued, 'no 100 before the refusal');
  const ok = await expecting(`${base}/v1/account/keys`, 'POST', { ...json, ...a.auth }, '{"label":"c"}');
  t.equal(ok.status, 200, ok.body);
  t.ok(ok.continued);
});

t.test('non-ASCII user metadata is signed over the UTF-8 bytes sent', async (t) => {
  const { app } = await listeningApp(t);
  const a = await activate(app);
  await createBucket(app, a, 'meta');
  const s3 = await s3Client(t, app, a);
  // The SDK signs the value's UTF-8 and sends those bytes (as boto3, Go and curl do); Node
  // reads header bytes as Latin-1.
  const put = await s3.send(
    new PutObjectCommand({ Bucket: 'meta', Key: 'm.txt', Body: 'm', Metadata: { note: 'café naïve' } })
  );
  t.ok(put.ETag, 'stored (user metadata itself is not kept: docs/storage.md)');
  t.ok(await s3.send(new HeadObjectCommand({ Bucket: 'meta', Key: 'm.txt' })));
});
