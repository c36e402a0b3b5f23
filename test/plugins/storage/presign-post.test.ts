import t from 'tap';
import { createHmac } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { S3Client, PutObjectCommand } from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { activate } from './helpers.js';
import { listeningApp } from '../../helpers/listening-app.js';
import { createBucket, presign, s3Credentials, storageUsage } from '../../helpers/storage-api.js';
import { s3rver } from '../../helpers/s3rver.js';
import { shiftedClock } from '../../helpers/clock.js';

// database-independent: POST policies and forms; the bucket rows are api.test.ts's, on both.

// Presigned POST (browser form uploads) for buckets on s3 and minio: the tier cap travels in
// the policy's content-length-range, which the service enforces. s3rver stores form uploads
// but does not check policies, so the policy is checked here as S3 checks it: signature,
// expiry, every condition, and no form field the policy does not cover.

const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();

/** Why S3 would refuse this form with a file of `size` bytes, or undefined when it would take it. */
function policyProblem(fields: Record<string, string>, size: number, secret: string): string | undefined {
  const lower = Object.fromEntries(Object.entries(fields).map(([k, v]) => [k.toLowerCase(), v]));
  const [keyId, date, region, service] = lower['x-amz-credential'].split('/');
  if (keyId !== 'S3RVER') return 'credential';
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), 'aws4_request');
  if (hmac(signingKey, lower.policy).toString('hex') !== lower['x-amz-signature']) return 'signature';
  const policy = JSON.parse(Buffer.from(lower.policy, 'base64').toString('utf8'));
  if (Date.parse(policy.expiration) <= Date.now()) return 'expired';
  const covered = new Set(['policy', 'x-amz-signature', 'file']);
  for (const c of policy.conditions as unknown[]) {
    if (Array.isArray(c) && c[0] === 'content-length-range') {
      if (size < c[1] || size > c[2]) return `EntityTooLarge: ${size} not in [${c[1]}, ${c[2]}]`;
      continue;
    }
    const [op, name, value] = Array.isArray(c)
      ? c
      : ['eq', `$${Object.keys(c as object)[0]}`, Object.values(c as object)[0]];
    const field = name.slice(1).toLowerCase();
    covered.add(field);
    const got = lower[field];
    if (op === 'eq' && got !== value) return `${field} must be ${value}`;
    if (op === 'starts-with' && !(got ?? '').startsWith(value)) return `${field} must start with ${value}`;
  }
  const extra = Object.keys(lower).filter((k) => !covered.has(k));
  return extra.length ? `extra input fields: ${extra.join(', ')}` : undefined;
}

function form(fields: Record<string, string>, file: Buffer, type: string): FormData {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) f.append(k, v);
  f.append('Content-Type', type);
  f.append('file', new Blob([file]), 'upload.bin');
  return f;
}

const caps = { free: { max_object_bytes: 1000, max_total_bytes: 1500 } };
const post = (url: string, body: FormData | string, headers?: Record<string, string>) =>
  fetch(url, { method: 'POST', body, headers });
const s3Code = async (res: Response) => /<Code>([^<]+)<\/Code>/.exec(await res.text())?.[1];

t.test(
  "local-storage: a POST form to the gateway's endpoint, checked as S3 checks it, capped and metered",
  async (t) => {
    const { app, base } = await listeningApp(t, { vendors: [], plugins: { storage: { tier_caps: caps } } });
    const u = await activate(app);
    await createBucket(app, u, 'photos');
    const res = await presign(app, u, 'photos', 'dir/a.txt', { method: 'POST', expires_seconds: 120 });
    t.equal(res.statusCode, 200);
    const p = res.json();
    t.match(p, { method: 'POST', max_bytes: 1000, url: `${base}/s3/photos` });
    t.equal(p.fields.key, 'dir/a.txt');
    const policy = JSON.parse(Buffer.from(p.fields.policy, 'base64').toString('utf8'));
    t.same(
      policy.conditions.filter((c: unknown) => Array.isArray(c) && c[0] === 'content-length-range'),
      [['content-length-range', 0, 1000]]
    );
    t.equal(p.expires_at, policy.expiration, "expires_at is the policy's expiration");
    t.equal(
      policyProblem(
        { ...p.fields, 'x-amz-credential': p.fields['x-amz-credential'].replace(/^[^/]+/, 'S3RVER') },
        10,
        'x'
      ),
      'signature',
      'the same policy format S3 signs'
    );

    const code = async (fields: Record<string, string>, file: Buffer) => {
      const r = await post(p.url, form(fields, file, 'text/plain'));
      return `${r.status} ${r.status >= 400 ? await s3Code(r) : ''}`.trim();
    };
    t.equal(await code(p.fields, Buffer.alloc(1001, 1)), '413 EntityTooLarge', 'one byte over the cap');
    t.equal(
      await code({ ...p.fields, key: 'dir/b.txt' }, Buffer.from('x')),
      '403 AccessDenied',
      'the key is fixed by the policy'
    );
    t.equal(
      await code({ ...p.fields, 'x-amz-meta-owner': 'me' }, Buffer.from('x')),
      '403 AccessDenied',
      'a field the policy does not name'
    );
    const flipped = p.fields['x-amz-signature'].replace(/^./, (c: string) => (c === '0' ? '1' : '0'));
    t.equal(await code({ ...p.fields, 'x-amz-signature': flipped }, Buffer.from('x')), '403 SignatureDoesNotMatch');
    const { policy: _p, 'x-amz-signature': _s, ...unsigned } = p.fields;
    t.equal(await code(unsigned, Buffer.from('x')), '403 AccessDenied', 'no anonymous forms');
    t.equal((await storageUsage(app, u)).bytes_stored, 0, 'the refused forms stored nothing');

    const ok = await post(
      p.url,
      form({ ...p.fields, 'x-ignore-trace': '1' }, Buffer.from('x'.repeat(1000)), 'text/plain')
    );
    t.equal(ok.status, 204, `the form upload: ${ok.status}`);
    t.match(ok.headers.get('etag'), /^"[0-9a-f]{32}"$/);
    t.equal(ok.headers.get('location'), `${base}/s3/photos/dir/a.txt`);
    const head = (
      await app.inject({ method: 'GET', url: '/v1/storage/buckets/photos/objects/dir%2Fa.txt', headers: u.auth })
    ).json();
    t.match(head, { size: 1000, content_type: 'text/plain' });
    t.equal((await storageUsage(app, u)).bytes_stored, 1000, 'metered as stored');
    const next = (await presign(app, u, 'photos', 'c.bin', { method: 'POST' })).json();
    t.equal(next.max_bytes, 500, 'the room left under the total cap');
    t.equal(await code(next.fields, Buffer.alloc(501)), '413 EntityTooLarge');

    const noFile = new FormData();
    for (const [k, v] of Object.entries(p.fields)) noFile.append(k, v as string);
    const nf = await post(p.url, noFile);
    t.equal(`${nf.status} ${await s3Code(nf)}`, '400 InvalidArgument', 'a form without a file');
    const bad = await post(p.url, '--x\r\ngarbage', { 'content-type': 'multipart/form-data; boundary=x' });
    t.equal(`${bad.status} ${await s3Code(bad)}`, '400 MalformedPOSTRequest');

    const short = (await presign(app, u, 'photos', 'late.txt', { method: 'POST', expires_seconds: 1 })).json();
    // Past the policy's expiration on the gateway's clock (this process's), with no wait.
    shiftedClock(t).advance(1100);
    const late = await post(short.url, form(short.fields, Buffer.from('late'), 'text/plain'));
    t.equal(late.status, 403);
    t.match(await late.text(), /Policy expired/);

    const other = await activate(app);
    await createBucket(app, other, 'mine');
    const theirs = (await presign(app, other, 'mine', 'x.txt', { method: 'POST' })).json();
    const cross = await post(`${base}/s3/photos`, form(theirs.fields, Buffer.from('x'), 'text/plain'));
    t.equal(cross.status, 403, 'a form signed for another bucket does not work on this one');
    const put = (await presign(app, u, 'photos', 'a.txt', {})).json();
    t.equal(put.method, 'PUT');
    t.notOk('fields' in put, 'PUT answers are as before');
  }
);

t.test(
  "a form from the AWS SDK's createPresignedPost with the account's S3 credentials: ${filename}, success_action_status 201",
  async (t) => {
    const { app, base } = await listeningApp(t, { vendors: [] });
    const u = await activate(app);
    await createBucket(app, u, 'uploads');
    const c = await s3Credentials(app, u);
    const s3 = new S3Client({
      endpoint: c.endpoint,
      region: c.region,
      forcePathStyle: true,
      credentials: { accessKeyId: c.access_key_id, secretAccessKey: c.secret_access_key },
    });
    t.teardown(() => s3.destroy());
    const { url, fields } = await createPresignedPost(s3, {
      Bucket: 'uploads',
      Key: 'in/${filename}',
      Expires: 60,
      Conditions: [
        ['content-length-range', 1, 100],
        ['starts-with', '$key', 'in/'],
        ['starts-with', '$Content-Type', 'image/'],
      ],
      Fields: { success_action_status: '201' },
    });
    t.equal(url.replace(/\/$/, ''), `${base}/s3/uploads`);
    const f = new FormData();
    for (const [k, v] of Object.entries(fields)) f.append(k, v);
    f.append('Content-Type', 'image/png');
    f.append('file', new Blob([Buffer.from('not really a png')]), 'cat.png');
    const res = await post(url, f);
    t.equal(res.status, 201);
    const xml = await res.text();
    t.match(
      xml,
      /<PostResponse[^>]*><Location>[^<]+\/s3\/uploads\/in\/cat\.png<\/Location><Bucket>uploads<\/Bucket><Key>in\/cat\.png<\/Key><ETag>/
    );
    const head = (
      await app.inject({ method: 'GET', url: '/v1/storage/buckets/uploads/objects/in%2Fcat.png', headers: u.auth })
    ).json();
    t.match(head, { size: 16, content_type: 'image/png' });
    const wrongType = new FormData();
    for (const [k, v] of Object.entries(fields)) wrongType.append(k, v);
    wrongType.append('Content-Type', 'text/html');
    wrongType.append('file', new Blob([Buffer.from('<b>')]), 'x.html');
    t.equal((await post(url, wrongType)).status, 403, 'the starts-with condition on Content-Type holds');
    const empty = new FormData();
    for (const [k, v] of Object.entries(fields)) empty.append(k, v);
    empty.append('Content-Type', 'image/png');
    empty.append('file', new Blob([]), 'e.png');
    const small = await post(url, empty);
    t.equal(`${small.status} ${await s3Code(small)}`, '400 EntityTooSmall', "under the policy's minimum");
  }
);

for (const adapter of ['s3', 'minio']) {
  t.test(
    `${adapter} with presign_through vendor: the service's own POST form, whose policy carries the tier cap; the upload lands in the bucket`,
    async (t) => {
      const endpoint = await s3rver(t);
      const config = {
        endpoint,
        bucket: 'backing',
        prefix: 'gw/',
        access_key_id: 'S3RVER',
        secret_access_key: 'S3RVER',
        ...(adapter === 's3' ? { force_path_style: true } : {}),
      };
      const { app } = await listeningApp(t, {
        vendors: [{ id: 'remote', use: adapter, config }],
        plugins: {
          storage: {
            presign_through: 'vendor',
            tier_caps: { free: { max_object_bytes: 1000, max_total_bytes: 1500 } },
          },
        },
      });
      const u = await activate(app);
      await createBucket(app, u, 'photos');
      const p = (await presign(app, u, 'photos', 'dir/a.txt', { method: 'POST', expires_seconds: 120 })).json();
      t.match(p, { method: 'POST', max_bytes: 1000 }, 'a form with the object cap');
      t.equal(p.url.replace(/\/$/, ''), `${endpoint}/backing`);
      t.ok(Date.parse(p.expires_at) <= Date.now() + 121_000);
      t.equal(p.fields.key, `gw/${u.account_id}/photos/dir/a.txt`);
      const policy = JSON.parse(Buffer.from(p.fields.policy ?? p.fields.Policy, 'base64').toString('utf8'));
      t.same(
        policy.conditions.filter((c: unknown) => Array.isArray(c) && c[0] === 'content-length-range'),
        [['content-length-range', 0, 1000]]
      );
      t.ok(Date.parse(policy.expiration) <= Date.now() + 121_000, 'the policy expires with the URL');
      t.equal(Date.parse(p.expires_at), Date.parse(policy.expiration), "expires_at is the policy's expiration");

      const ok = Buffer.from('x'.repeat(1000));
      const withType = { ...p.fields, 'Content-Type': 'text/plain' };
      t.equal(
        policyProblem(withType, ok.length, 'S3RVER'),
        undefined,
        'S3 would take a file at the cap, with a Content-Type field'
      );
      t.match(policyProblem(withType, 1001, 'S3RVER'), /EntityTooLarge/, 'and refuse one byte more');
      t.match(
        policyProblem({ ...withType, 'x-amz-meta-owner': 'me' }, 10, 'S3RVER'),
        /extra input fields: x-amz-meta-owner/
      );
      t.match(policyProblem(withType, 10, 'other-secret'), /signature/);
      t.match(
        policyProblem({ ...p.fields, key: 'gw/other/photos/x' }, 10, 'S3RVER'),
        /key must be/,
        'the key is fixed'
      );
      const up = await fetch(p.url, { method: 'POST', body: form(p.fields, ok, 'text/plain') });
      t.ok(up.status === 204 || up.status === 200, `form upload: ${up.status} ${await up.clone().text()}`);
      const head = (
        await app.inject({ method: 'GET', url: '/v1/storage/buckets/photos/objects/dir%2Fa.txt', headers: u.auth })
      ).json();
      t.equal(head.size, 1000);
      t.equal(head.content_type, 'text/plain');

      // Bytes stored through the gateway count against the total cap: the next form is smaller.
      const c = await s3Credentials(app, u);
      const s3 = new S3Client({
        endpoint: c.endpoint,
        region: c.region,
        forcePathStyle: true,
        credentials: { accessKeyId: c.access_key_id, secretAccessKey: c.secret_access_key },
      });
      t.teardown(() => s3.destroy());
      await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'b.bin', Body: Buffer.alloc(800) }));
      const next = (await presign(app, u, 'photos', 'c.bin', { method: 'POST' })).json();
      t.equal(next.max_bytes, 700, 'the room left under the total cap');
    }
  );
}

t.test(
  's3 with presign_through gateway (the default): the form goes through the gateway, so the upload is capped and metered',
  async (t) => {
    const endpoint = await s3rver(t);
    const { app, base } = await listeningApp(t, {
      vendors: [
        {
          id: 'remote',
          use: 's3',
          config: {
            endpoint,
            bucket: 'backing',
            prefix: 'gw/',
            access_key_id: 'S3RVER',
            secret_access_key: 'S3RVER',
            force_path_style: true,
          },
        },
      ],
      plugins: { storage: { tier_caps: caps } },
    });
    const u = await activate(app);
    await createBucket(app, u, 'photos');
    const p = (await presign(app, u, 'photos', 'a.txt', { method: 'POST' })).json();
    t.equal(p.url, `${base}/s3/photos`, "the gateway's endpoint, not the service");
    t.equal(p.fields.key, 'a.txt');
    const big = await post(p.url, form(p.fields, Buffer.alloc(1001), 'text/plain'));
    t.equal(`${big.status} ${await s3Code(big)}`, '413 EntityTooLarge');
    const ok = await post(p.url, form(p.fields, Buffer.from('y'.repeat(900)), 'text/plain'));
    t.equal(ok.status, 204);
    t.match(await storageUsage(app, u), { bytes_stored: 900 }, 'metered, which a form straight to the service is not');
    const got = await fetch(`${endpoint}/backing/gw/${u.account_id}/photos/a.txt`);
    t.equal(await got.text(), 'y'.repeat(900), "the bytes are in the service's bucket");
  }
);

t.test(
  'a client that goes away in the middle of the file: nothing stored, nothing left behind, the gateway serves on',
  async (t) => {
    const { app, base, dir } = await listeningApp(t, { vendors: [] });
    const u = await activate(app);
    await createBucket(app, u, 'photos');
    const p = (await presign(app, u, 'photos', 'half.bin', { method: 'POST' })).json();
    const boundary = 'xxBOUNDARYxx';
    const head =
      Object.entries(p.fields as Record<string, string>)
        .map(([k, v]) => `--${boundary}\r\ncontent-disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)
        .join('')
      + `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="half.bin"\r\ncontent-type: application/octet-stream\r\n\r\n`;
    const { port } = new URL(base);
    const sock = connect(Number(port), '127.0.0.1');
    await new Promise((ok) => sock.once('connect', ok));
    sock.write(
      `POST /s3/photos HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: multipart/form-data; boundary=${boundary}\r\ncontent-length: ${head.length + 200_000}\r\n\r\n${head}`
    );
    sock.write(Buffer.alloc(50_000, 1));
    await new Promise((ok) => setTimeout(ok, 100));
    sock.destroy();
    await new Promise((ok) => setTimeout(ok, 300));
    const head404 = await app.inject({
      method: 'GET',
      url: '/v1/storage/buckets/photos/objects/half.bin',
      headers: u.auth,
    });
    t.equal(head404.statusCode, 404, 'nothing stored');
    t.equal((await storageUsage(app, u)).bytes_stored, 0);
    const tmp = join(dir, 'objects', u.account_id, 'photos', '.tmp');
    t.same(existsSync(tmp) ? readdirSync(tmp) : [], [], 'no temp file left');
    const ok = await post(p.url, form(p.fields, Buffer.from('whole'), 'text/plain'));
    t.equal(ok.status, 204, 'the next form goes through');
  }
);
