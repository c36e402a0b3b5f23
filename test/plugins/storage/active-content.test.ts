import t from 'tap';
import type { FastifyInstance } from 'fastify';
import { activate } from './helpers.js';
import { listeningApp, s3BackedApp } from '../../helpers/listening-app.js';
import { createBucket, presign, s3Credentials } from '../../helpers/storage-api.js';
import type { Activated } from '../../helpers/app.js';
import { presignUrl } from '../../../core/capabilities/storage/sigv4.js';

// database-independent: content types served; the bucket rows are api.test.ts's, on both.

// HTML-like content is never served inline from the gateway's origin unless the bucket is
// public and the operator allows it, however its type is spelled.

async function upload(
  app: FastifyInstance,
  who: Activated,
  bucket: string,
  key: string,
  body: string,
  contentType: string
) {
  const up = (await presign(app, who, bucket, key, { method: 'PUT' })).json();
  const res = await fetch(up.url, { method: 'PUT', body, headers: { 'content-type': contentType } });
  if (res.status !== 200) throw new Error(`upload: ${res.status}`);
}

/** A GET URL signed with the account's S3 credentials, asking for `response-content-type`. */
async function signedGet(
  app: FastifyInstance,
  who: Activated,
  bucket: string,
  key: string,
  contentType: string
): Promise<string> {
  const c = await s3Credentials(app, who);
  return presignUrl({
    method: 'GET',
    endpoint: c.endpoint,
    bucket,
    key,
    region: c.region,
    accessKeyId: c.access_key_id,
    secret: c.secret_access_key,
    expiresSeconds: 60,
    query: [['response-content-type', contentType]],
  });
}

t.test(
  'a signed URL asking for an HTML type in any spelling gets an attachment; a malformed type is not sent back',
  async (t) => {
    const { app } = await listeningApp(t);
    const a = await activate(app);
    await createBucket(app, a, 'private-one');
    await upload(app, a, 'private-one', 'note.txt', '<script>alert(1)</script>', 'text/plain');
    for (const asked of [
      ' text/html',
      'TEXT/HTML',
      'text/html; charset=utf-8',
      'application/rss+xml',
      'text/xsl',
      'image/svg+xml',
    ]) {
      const res = await fetch(await signedGet(app, a, 'private-one', 'note.txt', asked));
      t.equal(res.status, 200, asked);
      t.equal(res.headers.get('content-type'), asked.trim(), asked);
      t.match(res.headers.get('content-disposition'), /^attachment; filename="note.txt"/, asked);
    }
    for (const asked of ['text/plain;,text/html', 'text/plain, text/html', 'html', '']) {
      const res = await fetch(await signedGet(app, a, 'private-one', 'note.txt', asked));
      t.equal(res.status, 200, JSON.stringify(asked));
      t.equal(res.headers.get('content-type'), 'application/octet-stream', `${JSON.stringify(asked)} is not sent back`);
      t.equal(res.headers.get('x-content-type-options'), 'nosniff');
    }
    const plain = await fetch(await signedGet(app, a, 'private-one', 'note.txt', 'text/plain; charset=utf-8'));
    t.equal(plain.headers.get('content-type'), 'text/plain; charset=utf-8');
    t.equal(plain.headers.get('content-disposition'), null, 'a passive type stays inline');
  }
);

t.test('objects stored with any XML or HTML type are attachments, in private and public buckets', async (t) => {
  const { app, base } = await listeningApp(t);
  const a = await activate(app);
  await createBucket(app, a, 'feeds');
  await createBucket(app, a, 'open-feeds', { acl: 'public' });
  const types = [
    'application/rss+xml',
    'application/atom+xml',
    'text/xsl',
    'Text/HTML; charset=utf-8',
    'text/plain;,text/html',
  ];
  for (const bucket of ['feeds', 'open-feeds']) {
    for (const [i, type] of types.entries()) await upload(app, a, bucket, `f${i}`, '<x/>', type);
  }
  for (const [i, type] of types.entries()) {
    const get = (await presign(app, a, 'feeds', `f${i}`, { method: 'GET' })).json();
    const priv = await fetch(get.url);
    t.match(priv.headers.get('content-disposition'), /^attachment; filename="f\d"/, `private ${type}`);
    const pub = await fetch(`${base}/s3/${a.account_id}/open-feeds/f${i}`);
    t.equal(pub.status, 200);
    t.match(pub.headers.get('content-disposition'), /^attachment; filename="f\d"/, `public ${type}`);
  }
});

t.test('inline only when the bucket is public and the operator allows inline HTML', async (t) => {
  const { app, base } = await listeningApp(t, { plugins: { storage: { allow_inline_html: true } } });
  const a = await activate(app);
  await createBucket(app, a, 'site', { acl: 'public' });
  await createBucket(app, a, 'closed');
  for (const bucket of ['site', 'closed']) await upload(app, a, bucket, 'feed.xml', '<rss/>', 'application/rss+xml');
  const pub = await fetch(`${base}/s3/${a.account_id}/site/feed.xml`);
  t.equal(pub.headers.get('content-type'), 'application/rss+xml');
  t.equal(pub.headers.get('content-disposition'), null);
  const get = (await presign(app, a, 'closed', 'feed.xml', { method: 'GET' })).json();
  t.match((await fetch(get.url)).headers.get('content-disposition'), /^attachment/);
  const asked = await fetch(await signedGet(app, a, 'closed', 'feed.xml', ' text/html'));
  t.match(
    asked.headers.get('content-disposition'),
    /^attachment/,
    'a private bucket never serves a page, whatever the URL asks'
  );
});

t.test('a result URL signed by the vendor never asks for an active type inline', async (t) => {
  const { app } = await s3BackedApp(t, { plugins: { storage: { presign_through: 'vendor' } } });
  const a = await activate(app);
  const html = await app.svc.results.save(a.account_id, Buffer.from('<p>x</p>'), {
    contentType: 'image/svg+xml',
    filename: 'x.svg',
    inline: true,
  });
  t.match(new URL(html.url).searchParams.get('response-content-disposition'), /^attachment; filename="x.svg"/);
  const png = await app.svc.results.save(a.account_id, Buffer.from('png'), {
    contentType: 'image/png',
    filename: 'x.png',
    inline: true,
  });
  t.match(new URL(png.url).searchParams.get('response-content-disposition'), /^inline; filename="x.png"/);
});
