import t from 'tap';
import { connect } from 'node:net';
import { createHash } from 'node:crypto';
import {
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  PutObjectCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { activate, errorOf } from '../helpers.js';
import { listeningApp } from '../../../helpers/listening-app.js';
import { createBucket, presign, s3Client } from '../../../helpers/storage-api.js';

// database-independent: the S3 endpoint's parsing and answers; the rows are api.test.ts's, on both.

// Bugs ceph's s3-tests found in the S3 endpoint, each through the AWS SDK or raw HTTP.

/** Send a whole request, then read (as Python's requests does): the answer, or TIMEOUT when none comes. */
function sendThenRead(base: string, head: string, body: Buffer): Promise<string> {
  const u = new URL(base);
  return new Promise((resolve) => {
    const s = connect(Number(u.port), u.hostname);
    let got = '';
    const done = (what: string) => {
      clearTimeout(timer);
      s.destroy();
      resolve(what);
    };
    const timer = setTimeout(() => done(`TIMEOUT ${got}`), 10_000);
    s.on('data', (d) => {
      got += d;
      if (/\r\n\r\n/.test(got)) done(got);
    });
    s.on('error', () => done(got || 'ERROR'));
    s.on('close', () => done(got || 'CLOSED'));
    s.write(`${head}\r\ncontent-length: ${body.length}\r\n\r\n`);
    s.write(body);
  });
}

/** multipart/form-data with boundary BB; a part with a filename is a file part. */
function form(parts: Array<[string, string | Buffer, string?]>): Buffer {
  const out: Buffer[] = [];
  for (const [name, v, filename] of parts) {
    out.push(
      Buffer.from(
        `--BB\r\ncontent-disposition: form-data; name="${name}"${filename ? `; filename="${filename}"` : ''}\r\n\r\n`
      ),
      Buffer.from(v),
      Buffer.from('\r\n')
    );
  }
  out.push(Buffer.from('--BB--\r\n'));
  return Buffer.concat(out);
}

const status = (answer: string) => answer.split('\r\n')[0];

t.test(
  'a PutObject with an empty or unparsable Content-Type is stored (the default type, or the type as sent)',
  async (t) => {
    const { app } = await listeningApp(t);
    const a = await activate(app);
    await createBucket(app, a, 'types');
    for (const [key, sent, stored] of [
      ['empty', '', 'application/octet-stream'],
      ['odd', 'not a media type', 'not a media type'],
    ]) {
      const put = (await presign(app, a, 'types', key, { method: 'PUT' })).json();
      const res = await fetch(put.url, { method: 'PUT', body: 'hello', headers: { 'content-type': sent } });
      t.equal(res.status, 200, `${JSON.stringify(sent)}: ${await res.text()}`);
      const got = await fetch((await presign(app, a, 'types', key, { method: 'GET' })).json().url);
      t.equal(got.headers.get('content-type'), stored);
      t.equal(await got.text(), 'hello');
    }
  }
);

t.test('POST forms answer promptly whatever the order of their parts', async (t) => {
  const { app, base } = await listeningApp(t);
  const a = await activate(app);
  await createBucket(app, a, 'forms');
  const head = (host: string) =>
    `POST /s3/forms HTTP/1.1\r\nhost: ${host}\r\ncontent-type: multipart/form-data; boundary=BB\r\nconnection: close`;
  const host = new URL(base).host;
  const fields = async (key: string) =>
    Object.entries((await presign(app, a, 'forms', key, { method: 'POST' })).json().fields) as Array<[string, string]>;
  const big = Buffer.alloc(100_000, 7);

  // Python's requests (`files=`, as the s3-tests send forms) makes every field a file part.
  const asFiles = (await fields('requests.bin')).map(([k, v]) => [k, v, k] as [string, string, string]);
  t.match(
    status(await sendThenRead(base, head(host), form([...asFiles, ['file', big, 'file']]))),
    / 204 /,
    'fields sent as file parts are fields'
  );
  const stored = await fetch((await presign(app, a, 'forms', 'requests.bin', { method: 'GET' })).json().url);
  t.equal(
    createHash('md5')
      .update(Buffer.from(await stored.arrayBuffer()))
      .digest('hex'),
    createHash('md5').update(big).digest('hex')
  );

  const first = await sendThenRead(base, head(host), form([['file', big, 'a.bin'], ...(await fields('late.bin'))]));
  t.match(status(first), / 403 /, 'the file before the policy: refused at once, not left hanging');
  const other = await sendThenRead(
    base,
    head(host),
    form([['notes', big, 'n.bin'], ...(await fields('n.bin')), ['file', 'x', 'f.bin']])
  );
  t.match(status(other), / 400 /, 'a 100 KB file part before the policy: a field over 20 KB');
  t.match(other, /longer than 20 KB/);
  const many = Array.from(
    { length: 120 },
    (_, i) => [`x-extra-${i}`, big.subarray(0, 1000), `e${i}`] as [string, Buffer, string]
  );
  t.match(
    status(await sendThenRead(base, head(host), form([...many, ...(await fields('m.bin')), ['file', 'x', 'f.bin']]))),
    / 400 /,
    'too many parts'
  );
});

t.test(
  'server-side encryption is refused with 501 NotImplemented naming the header, and nothing is stored',
  async (t) => {
    const { app } = await listeningApp(t);
    const a = await activate(app);
    const s3 = await s3Client(t, app, a);
    await createBucket(app, a, 'sse');
    await s3.send(new PutObjectCommand({ Bucket: 'sse', Key: 'plain', Body: 'plain' }));
    const key = Buffer.alloc(32, 9);
    const ssec = {
      SSECustomerAlgorithm: 'AES256',
      SSECustomerKey: key.toString('base64'),
      SSECustomerKeyMD5: createHash('md5').update(key).digest('base64'),
    };
    const refused = async (what: string, p: Promise<unknown>, header: RegExp) => {
      const e = await errorOf(p);
      t.equal(`${e.$metadata.httpStatusCode} ${e.name}`, '501 NotImplemented', what);
      t.match(e.message, header, `${what}: names the header`);
    };
    await refused(
      'SSE-C PutObject',
      s3.send(new PutObjectCommand({ Bucket: 'sse', Key: 'c', Body: 'secret', ...ssec })),
      /x-amz-server-side-encryption-customer-/
    );
    await refused(
      'SSE-S3 PutObject',
      s3.send(new PutObjectCommand({ Bucket: 'sse', Key: 's', Body: 'secret', ServerSideEncryption: 'AES256' })),
      /x-amz-server-side-encryption/
    );
    await refused(
      'SSE-KMS PutObject',
      s3.send(
        new PutObjectCommand({
          Bucket: 'sse',
          Key: 'k',
          Body: 'secret',
          ServerSideEncryption: 'aws:kms',
          SSEKMSKeyId: 'alias/x',
        })
      ),
      /x-amz-server-side-encryption/
    );
    await refused(
      'CreateMultipartUpload',
      s3.send(new CreateMultipartUploadCommand({ Bucket: 'sse', Key: 'm', ServerSideEncryption: 'AES256' })),
      /x-amz-server-side-encryption/
    );
    await refused(
      'CopyObject',
      s3.send(new CopyObjectCommand({ Bucket: 'sse', Key: 'copy', CopySource: 'sse/plain', ...ssec })),
      /x-amz-server-side-encryption-customer-/
    );
    await refused(
      'GetObject with SSE-C',
      s3.send(new GetObjectCommand({ Bucket: 'sse', Key: 'plain', ...ssec })),
      /x-amz-server-side-encryption-customer-/
    );
    // A HEAD answer has no body: only its status says what happened.
    t.equal(
      (await errorOf(s3.send(new HeadObjectCommand({ Bucket: 'sse', Key: 'plain', ...ssec })))).$metadata
        .httpStatusCode,
      501,
      'HeadObject with SSE-C'
    );
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'sse', Key: 'up' }));
    await refused(
      'UploadPart with SSE-C',
      s3.send(new UploadPartCommand({ Bucket: 'sse', Key: 'up', UploadId, PartNumber: 1, Body: 'x', ...ssec })),
      /x-amz-server-side-encryption-customer-/
    );
    for (const k of ['c', 's', 'k', 'copy'])
      t.equal(
        (await errorOf(s3.send(new HeadObjectCommand({ Bucket: 'sse', Key: k })))).name,
        'NotFound',
        `${k}: nothing stored`
      );

    const post = (await presign(app, a, 'sse', 'form.txt', { method: 'POST' })).json();
    const fd = new FormData();
    for (const [k, v] of Object.entries(post.fields)) fd.append(k, v as string);
    fd.append('x-amz-server-side-encryption', 'AES256');
    fd.append('file', new Blob(['secret']), 'form.txt');
    const res = await fetch(post.url, { method: 'POST', body: fd });
    t.equal(res.status, 501, 'a POST form with an encryption field');
    t.match(await res.text(), /<Code>NotImplemented<\/Code>.*x-amz-server-side-encryption/s);
    t.equal((await errorOf(s3.send(new HeadObjectCommand({ Bucket: 'sse', Key: 'form.txt' })))).name, 'NotFound');
  }
);

t.test(
  'canned ACLs: private, and public-read in a public bucket, are accepted; any other is 501; grants are 501',
  async (t) => {
    const { app } = await listeningApp(t);
    const a = await activate(app);
    const s3 = await s3Client(t, app, a);
    await createBucket(app, a, 'closed');
    await createBucket(app, a, 'open', { acl: 'public' });
    const code = async (p: Promise<unknown>) => {
      const e = await errorOf(p);
      return `${e.$metadata.httpStatusCode} ${e.name}`;
    };
    await s3.send(new PutObjectCommand({ Bucket: 'closed', Key: 'a', Body: 'x', ACL: 'private' }));
    await s3.send(new PutObjectCommand({ Bucket: 'open', Key: 'a', Body: 'x', ACL: 'public-read' }));
    // As in S3, a private object ACL does not undo a bucket's public reads (rclone sends private by default).
    await s3.send(new PutObjectCommand({ Bucket: 'open', Key: 'p', Body: 'x', ACL: 'private' }));
    t.pass('private anywhere, and public-read in a public bucket, are what the objects are');
    t.equal(
      await code(s3.send(new PutObjectCommand({ Bucket: 'closed', Key: 'b', Body: 'x', ACL: 'public-read' }))),
      '501 NotImplemented',
      'public-read in a private bucket'
    );
    t.equal(
      await code(s3.send(new PutObjectCommand({ Bucket: 'open', Key: 'b', Body: 'x', ACL: 'public-read-write' }))),
      '501 NotImplemented',
      'public-read-write'
    );
    t.equal(
      await code(s3.send(new PutObjectCommand({ Bucket: 'closed', Key: 'b', Body: 'x', ACL: 'authenticated-read' }))),
      '501 NotImplemented'
    );
    t.equal(
      await code(s3.send(new PutObjectCommand({ Bucket: 'closed', Key: 'b', Body: 'x', GrantRead: 'id=someone' }))),
      '501 NotImplemented',
      'a grant'
    );
    t.equal(
      await code(s3.send(new CreateMultipartUploadCommand({ Bucket: 'closed', Key: 'b', ACL: 'public-read' }))),
      '501 NotImplemented'
    );
    t.equal(
      await code(s3.send(new HeadObjectCommand({ Bucket: 'closed', Key: 'b' }))),
      '404 NotFound',
      'nothing stored'
    );
    t.equal(
      await code(s3.send(new CreateBucketCommand({ Bucket: 'shared', ACL: 'authenticated-read' }))),
      '501 NotImplemented',
      'a bucket is private or public-read'
    );
    t.equal(await code(s3.send(new HeadBucketCommand({ Bucket: 'shared' }))), '404 NotFound', 'and was not created');
    await s3.send(new CreateBucketCommand({ Bucket: 'pub-made', ACL: 'public-read' }));
    const made = await app.inject({ method: 'GET', url: '/v1/storage/buckets', headers: a.auth });
    t.equal(made.json().items.find((b: { bucket: string }) => b.bucket === 'pub-made')?.acl, 'public', made.body);
  }
);

t.test('Signature Version 2 is answered with how to sign with Version 4', async (t) => {
  const { app, base } = await listeningApp(t);
  const a = await activate(app);
  await createBucket(app, a, 'sig-v2');
  const v2 = await fetch(
    `${base}/s3/sig-v2/k.txt?AWSAccessKeyId=AKIDEXAMPLE&Expires=2000000000&Signature=c2lnbmF0dXJl`
  );
  const header = await fetch(`${base}/s3/sig-v2/k.txt`, {
    headers: { authorization: 'AWS AKIDEXAMPLE:c2lnbmF0dXJl', date: new Date().toUTCString() },
  });
  for (const res of [v2, header]) {
    t.equal(res.status, 400);
    const body = await res.text();
    t.match(body, /<Code>InvalidRequest<\/Code>/);
    t.match(body, /Signature Version 4/);
    t.match(body, /aws configure set default\.s3\.signature_version s3v4/);
  }
});
