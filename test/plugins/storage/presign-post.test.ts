import t from 'tap';
import { createHmac } from 'node:crypto';
import { S3Client, PutObjectCommand } from '@aws-sdk/client-s3';
import { listeningApp, activate, createBucket, presign, s3Credentials } from './helpers.js';
import { s3rver } from '../../helpers/s3rver.js';

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
    const [op, name, value] = Array.isArray(c) ? c : ['eq', `$${Object.keys(c as object)[0]}`, Object.values(c as object)[0]];
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

t.test('local-storage buckets take no POST forms: a clear 400, PUT still works', async (t) => {
  const { app } = await listeningApp(t, { vendors: [] });
  const u = await activate(app);
  await createBucket(app, u, 'photos');
  const res = await presign(app, u, 'photos', 'a.txt', { method: 'POST' });
  t.equal(res.statusCode, 400);
  t.equal(res.json().error.code, 'validation_failed');
  t.equal(res.json().error.param, 'method');
  t.match(res.json().error.message, /local-storage.*use PUT/);
  const put = (await presign(app, u, 'photos', 'a.txt', {})).json();
  t.equal(put.method, 'PUT');
  t.notOk('fields' in put, 'PUT answers are as before');
});

for (const adapter of ['s3', 'minio']) {
  t.test(`${adapter}: a POST form whose policy carries the tier cap; the upload lands in the bucket`, async (t) => {
    const endpoint = await s3rver(t);
    const config = { endpoint, bucket: 'backing', prefix: 'gw/', access_key_id: 'S3RVER', secret_access_key: 'S3RVER', ...(adapter === 's3' ? { force_path_style: true } : {}) };
    const { app } = await listeningApp(t, {
      vendors: [{ id: 'remote', use: adapter, config }],
      plugins: { storage: { tier_caps: { free: { max_object_bytes: 1000, max_total_bytes: 1500 } } } },
    });
    const u = await activate(app);
    await createBucket(app, u, 'photos');
    const p = (await presign(app, u, 'photos', 'dir/a.txt', { method: 'POST', expires_seconds: 120 })).json();
    t.match(p, { method: 'POST', max_bytes: 1000 }, 'a form with the object cap');
    t.equal(p.url.replace(/\/$/, ''), `${endpoint}/backing`);
    t.ok(Date.parse(p.expires_at) <= Date.now() + 121_000);
    t.equal(p.fields.key, `gw/${u.account_id}/photos/dir/a.txt`);
    const policy = JSON.parse(Buffer.from(p.fields.policy ?? p.fields.Policy, 'base64').toString('utf8'));
    t.same(policy.conditions.filter((c: unknown) => Array.isArray(c) && c[0] === 'content-length-range'), [['content-length-range', 0, 1000]]);
    t.ok(Date.parse(policy.expiration) <= Date.now() + 121_000, 'the policy expires with the URL');

    const ok = Buffer.from('x'.repeat(1000));
    const withType = { ...p.fields, 'Content-Type': 'text/plain' };
    t.equal(policyProblem(withType, ok.length, 'S3RVER'), undefined, 'S3 would take a file at the cap, with a Content-Type field');
    t.match(policyProblem(withType, 1001, 'S3RVER'), /EntityTooLarge/, 'and refuse one byte more');
    t.match(policyProblem({ ...withType, 'x-amz-meta-owner': 'me' }, 10, 'S3RVER'), /extra input fields: x-amz-meta-owner/);
    t.match(policyProblem(withType, 10, 'other-secret'), /signature/);
    t.match(policyProblem({ ...p.fields, key: 'gw/other/photos/x' }, 10, 'S3RVER'), /key must be/, 'the key is fixed');
    const up = await fetch(p.url, { method: 'POST', body: form(p.fields, ok, 'text/plain') });
    t.ok(up.status === 204 || up.status === 200, `form upload: ${up.status} ${await up.clone().text()}`);
    const head = (await app.inject({ method: 'GET', url: '/v1/storage/buckets/photos/objects/dir%2Fa.txt', headers: u.auth })).json();
    t.equal(head.size, 1000);
    t.equal(head.content_type, 'text/plain');

    // Bytes stored through the gateway count against the total cap: the next form is smaller.
    const c = await s3Credentials(app, u);
    const s3 = new S3Client({ endpoint: c.endpoint, region: c.region, forcePathStyle: true, credentials: { accessKeyId: c.access_key_id, secretAccessKey: c.secret_access_key } });
    t.teardown(() => s3.destroy());
    await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'b.bin', Body: Buffer.alloc(800) }));
    const next = (await presign(app, u, 'photos', 'c.bin', { method: 'POST' })).json();
    t.equal(next.max_bytes, 700, 'the room left under the total cap');
  });
}
