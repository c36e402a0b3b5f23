import t from 'tap';
import { GetObjectCommand, ListBucketsCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../../core/app.js';
import { activate, errorOf } from './helpers.js';
import { listeningApp } from '../../helpers/listening-app.js';
import { createBucket, presign, s3Client } from '../../helpers/storage-api.js';
import { makeApp, ONE_NODE_ONLY, type Activated } from '../../helpers/app.js';

// A suspended account loses the S3 endpoint with its API keys: SigV4 credentials, presigned
// URLs, POST forms and its public buckets all answer AccessDenied, and work again on resume.

const ADMIN = 'operator-secret-0123456789';
const REDIS_URL = process.env.SVC_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

async function admin(app: FastifyInstance, who: Activated, action: 'suspend' | 'resume') {
  const res = await app.inject({
    method: 'POST',
    url: `/v1/admin/accounts/${who.account_id}/${action}`,
    headers: { authorization: `Bearer ${ADMIN}` },
  });
  if (res.statusCode !== 200) throw new Error(`${action}: ${res.statusCode} ${res.body}`);
}

/** Every way into the endpoint, each answering "<status> <S3 code or body>". */
function paths(
  s3: S3Client,
  base: string,
  who: Activated,
  presignedGet: string,
  form: { url: string; fields: Record<string, string> }
) {
  const sdk = async (p: Promise<unknown>) => {
    try {
      await p;
      return '200';
    } catch {
      const e = await errorOf(p);
      return `${e.$metadata.httpStatusCode} ${e.name}: ${e.message}`;
    }
  };
  const plain = async (r: Response) => (r.status < 300 ? `${r.status}` : `${r.status} ${await r.text()}`);
  const upload = () => {
    const f = new FormData();
    for (const [k, v] of Object.entries(form.fields)) f.append(k, v);
    f.append('file', new Blob([Buffer.from('form bytes')]), 'f.txt');
    return f;
  };
  return {
    'SDK GetObject': () => sdk(s3.send(new GetObjectCommand({ Bucket: 'priv', Key: 'a.txt' }))),
    'SDK PutObject': () => sdk(s3.send(new PutObjectCommand({ Bucket: 'priv', Key: 'b.txt', Body: 'more' }))),
    'SDK ListBuckets': () => sdk(s3.send(new ListBucketsCommand({}))),
    'presigned GET': async () => plain(await fetch(presignedGet)),
    'POST form': async () => plain(await fetch(form.url, { method: 'POST', body: upload() })),
    'public GET': async () => plain(await fetch(`${base}/s3/${who.account_id}/pub/p.txt`)),
  };
}

t.test('suspension closes every S3 path of the account (and only its own); resuming opens them again', async (t) => {
  const { app, base } = await listeningApp(t, { admin_key: ADMIN });
  const a = await activate(app);
  const b = await activate(app);
  const clients: Record<string, S3Client> = {};
  const ways: Record<string, ReturnType<typeof paths>> = {};
  for (const [name, who] of [
    ['a', a],
    ['b', b],
  ] as const) {
    await createBucket(app, who, 'priv');
    await createBucket(app, who, 'pub', { acl: 'public' });
    const s3 = (clients[name] = await s3Client(t, app, who));
    await s3.send(new PutObjectCommand({ Bucket: 'priv', Key: 'a.txt', Body: 'private bytes' }));
    await s3.send(new PutObjectCommand({ Bucket: 'pub', Key: 'p.txt', Body: 'public bytes' }));
    const presignedGet = await getSignedUrl(s3, new GetObjectCommand({ Bucket: 'priv', Key: 'a.txt' }), {
      expiresIn: 600,
    });
    const form = await createPresignedPost(s3, { Bucket: 'priv', Key: 'form.txt', Expires: 600 });
    ways[name] = paths(s3, base, who, presignedGet, form);
  }
  // Every path works, and the lookups it makes are now cached: suspension must beat the caches.
  for (const [way, run] of Object.entries(ways.a)) t.match(await run(), /^20\d$/, `before: ${way}`);

  await admin(app, a, 'suspend');
  for (const [way, run] of Object.entries(ways.a)) {
    const got = await run();
    t.match(got, /^403 /, `suspended: ${way} is refused`);
    t.match(got, /AccessDenied/, `suspended: ${way} says AccessDenied`);
    t.match(got, /suspended/, `suspended: ${way} says why`);
  }
  for (const [way, run] of Object.entries(ways.b))
    t.match(await run(), /^20\d$/, `another account is unaffected: ${way}`);

  await admin(app, a, 'resume');
  for (const [way, run] of Object.entries(ways.a)) t.match(await run(), /^20\d$/, `resumed: ${way} works again`);
});

t.test(
  "two nodes on one database and one Redis: a suspension on one node closes the other node's S3 at once",
  { skip: ONE_NODE_ONLY },
  async (t) => {
    const first = await makeApp(t, { admin_key: ADMIN, redis: { url: REDIS_URL } });
    const a = first.app;
    const b = await buildApp(first.config);
    t.teardown(() => b.close());
    await b.ready();
    const who = await activate(a);
    await createBucket(a, who, 'pub', { acl: 'public' });
    const up = (await presign(a, who, 'pub', 'p.txt', { method: 'PUT' })).json();
    const target = new URL(up.url);
    const put = await a.inject({
      method: 'PUT',
      url: target.pathname + target.search,
      headers: { host: target.host },
      payload: 'public bytes',
    });
    t.equal(put.statusCode, 200);
    const read = () => b.inject({ method: 'GET', url: `/s3/${who.account_id}/pub/p.txt` });
    t.equal((await read()).statusCode, 200, 'node b serves it, and caches the account as active');
    // Node b's cache would keep the account active for 10 s: only the bus can make this quick.
    const settle = async (want: number) => {
      let got = 0;
      for (let i = 0; i < 50 && got !== want; i++) {
        got = (await read()).statusCode;
        if (got !== want) await new Promise((r) => setTimeout(r, 10));
      }
      return got;
    };
    await admin(a, who, 'suspend');
    t.equal(await settle(403), 403, 'suspended on node a: node b refuses within half a second');
    t.match((await read()).body, /<Code>AccessDenied<\/Code><Message>The account is suspended/);
    await admin(a, who, 'resume');
    t.equal(await settle(200), 200, 'resumed on node a: node b serves again');
  }
);
