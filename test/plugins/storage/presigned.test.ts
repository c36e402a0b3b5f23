import t from 'tap';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { activate, generated, sha256Of, urlExpiry } from './helpers.js';
import { listeningApp } from '../../helpers/listening-app.js';
import { createBucket, presign } from '../../helpers/storage-api.js';
import { shiftedClock } from '../../helpers/clock.js';

// database-independent: presigned URL checks; the bucket rows are api.test.ts's, on both.

const SIZE = 8 * 1024 * 1024 + 123; // not a multiple of any buffer size

t.test('presign PUT, upload with fetch, presign GET, download the same bytes', async (t) => {
  const { app } = await listeningApp(t);
  const a = await activate(app);
  await createBucket(app, a, 'uploads');
  const put = await presign(app, a, 'uploads', 'dir/data file.bin', { method: 'PUT', expires_seconds: 300 });
  t.equal(put.statusCode, 200, put.body);
  const p = put.json();
  t.equal(p.method, 'PUT');
  // On any vendor the URL is the gateway's own endpoint (presign_through: gateway, the default).
  t.match(p.url, /\/s3\/uploads\/dir\/data%20file\.bin\?X-Amz-Algorithm=AWS4-HMAC-SHA256/);
  t.ok(Math.abs(Date.parse(p.expires_at) - (Date.now() + 300_000)) < 5000);
  // Several, so that a call made on a whole second cannot pass by chance.
  for (let i = 0; i < 3; i++) {
    const again = (
      await presign(app, a, 'uploads', 'x', { method: i ? 'GET' : 'PUT', expires_seconds: 300 + i })
    ).json();
    t.equal(again.expires_at, urlExpiry(again.url), "expires_at is the URL's X-Amz-Date + X-Amz-Expires, not later");
    await sleep(7);
  }

  const up = await fetch(p.url, {
    method: 'PUT',
    body: Readable.toWeb(generated(SIZE)) as any,
    duplex: 'half',
    headers: { 'content-type': 'application/x-test' },
  } as any);
  t.equal(up.status, 200, await up.clone().text());
  t.match(up.headers.get('etag'), /^"[0-9a-f]{32}"$/);

  const get = (await presign(app, a, 'uploads', 'dir/data file.bin', { method: 'GET' })).json();
  const down = await fetch(get.url);
  t.equal(down.status, 200);
  t.equal(down.headers.get('content-length'), String(SIZE));
  t.equal(down.headers.get('content-type'), 'application/x-test');
  t.equal(down.headers.get('etag'), up.headers.get('etag'));
  t.equal(down.headers.get('x-content-type-options'), 'nosniff');
  const got = await sha256Of(down.body as any);
  const want = await sha256Of(generated(SIZE));
  t.same(got, want);

  const ranged = await fetch(get.url, { headers: { range: 'bytes=1048576-1048585' } });
  t.equal(ranged.status, 206);
  t.equal(ranged.headers.get('content-range'), `bytes 1048576-1048585/${SIZE}`);
  const slice = Buffer.from(await ranged.arrayBuffer());
  const whole: Buffer[] = [];
  for await (const c of generated(1048586)) whole.push(c);
  t.same(slice, Buffer.concat(whole).subarray(1048576));

  const head = await app.inject({
    method: 'GET',
    url: '/v1/storage/buckets/uploads/objects/dir%2Fdata%20file.bin',
    headers: a.auth,
  });
  t.same(
    { ...head.json(), last_modified: 'x' },
    {
      key: 'dir/data file.bin',
      size: SIZE,
      etag: up.headers.get('etag'),
      content_type: 'application/x-test',
      last_modified: 'x',
    }
  );
});

t.test('expired, tampered, wrong-method and wrong-bucket URLs are 403 with S3 XML', async (t) => {
  const { app } = await listeningApp(t);
  const a = await activate(app);
  await createBucket(app, a, 'b-one');
  await createBucket(app, a, 'b-two');
  const up = (await presign(app, a, 'b-one', 'k.txt', { method: 'PUT' })).json();
  t.equal((await fetch(up.url, { method: 'PUT', body: 'hello' })).status, 200);

  // Tampering is checked on a URL that cannot expire meanwhile (a loaded machine once let a
  // 1 s URL expire first, and the answer was AccessDenied, not SignatureDoesNotMatch).
  const get = (await presign(app, a, 'b-one', 'k.txt', { method: 'GET', expires_seconds: 300 })).json();
  t.equal((await fetch(get.url)).status, 200);

  const flipped = get.url.replace(
    /X-Amz-Signature=([0-9a-f])/,
    (_m: string, c: string) => `X-Amz-Signature=${c === 'a' ? 'b' : 'a'}`
  );
  const bad = await fetch(flipped);
  t.equal(bad.status, 403);
  t.equal(bad.headers.get('content-type'), 'application/xml');
  t.match(await bad.text(), /<Code>SignatureDoesNotMatch<\/Code>/);

  const wrongMethod = await fetch(up.url.replace(/\?/, '?'), { method: 'DELETE' });
  t.equal(wrongMethod.status, 403, 'a PUT URL does not authorize DELETE');
  t.match(await wrongMethod.text(), /SignatureDoesNotMatch/);
  const getWithPut = await fetch(up.url);
  t.equal(getWithPut.status, 403, 'a PUT URL does not authorize GET');

  const wrongBucket = await fetch(get.url.replace('/b-one/', '/b-two/'));
  t.equal(wrongBucket.status, 403);

  const longer = await fetch(get.url.replace(/X-Amz-Expires=300/, 'X-Amz-Expires=400'));
  t.equal(longer.status, 403, 'a changed expiry breaks the signature');
  t.match(await longer.text(), /<Code>SignatureDoesNotMatch<\/Code>/);

  // Expiry: the gateway's clock (this process's) moved past the moment the URL itself names
  // (X-Amz-Date + X-Amz-Expires), not a guess, and not waited for.
  const short = (await presign(app, a, 'b-one', 'k.txt', { method: 'GET', expires_seconds: 1 })).json();
  shiftedClock(t).advance(Math.max(0, Date.parse(urlExpiry(short.url)) + 50 - Date.now()));
  const expired = await fetch(short.url);
  t.equal(expired.status, 403);
  const body = await expired.text();
  t.match(body, /<Code>AccessDenied<\/Code>/);
  t.match(body, /expired/);
});

t.test('public buckets serve unsigned GETs; private ones do not; HTML is an attachment', async (t) => {
  const { app, base } = await listeningApp(t);
  const a = await activate(app);
  await createBucket(app, a, 'site', { acl: 'public' });
  await createBucket(app, a, 'secret');
  for (const bucket of ['site', 'secret']) {
    const up = (await presign(app, a, bucket, 'index.html', { method: 'PUT' })).json();
    t.equal(
      (
        await fetch(up.url, {
          method: 'PUT',
          body: '<script>alert(1)</script>',
          headers: { 'content-type': 'text/html' },
        })
      ).status,
      200
    );
  }
  const pub = await fetch(`${base}/s3/${a.account_id}/site/index.html`);
  t.equal(pub.status, 200);
  t.equal(pub.headers.get('x-content-type-options'), 'nosniff');
  t.match(pub.headers.get('content-disposition'), /^attachment; filename="index.html"/);
  t.equal(await pub.text(), '<script>alert(1)</script>');
  const priv = await fetch(`${base}/s3/${a.account_id}/secret/index.html`);
  t.equal(priv.status, 403);
  const missing = await fetch(`${base}/s3/${a.account_id}/secret/nothing-here`);
  t.equal(missing.status, 403, 'an unsigned request learns nothing about private keys');
  const unsignedPut = await fetch(`${base}/s3/${a.account_id}/site/x`, { method: 'PUT', body: 'x' });
  t.equal(unsignedPut.status, 403);
  const noKey = await fetch(`${base}/s3/${a.account_id}/site/nope`);
  t.equal(noKey.status, 404);
  t.match(await noKey.text(), /NoSuchKey/);
});

t.test('public buckets serve HTML inline when the operator allows it', async (t) => {
  const { app, base } = await listeningApp(t, { plugins: { storage: { allow_inline_html: true } } });
  const a = await activate(app);
  await createBucket(app, a, 'site', { acl: 'public' });
  const up = (await presign(app, a, 'site', 'index.html', { method: 'PUT' })).json();
  await fetch(up.url, { method: 'PUT', body: '<p>hi</p>', headers: { 'content-type': 'text/html' } });
  const res = await fetch(`${base}/s3/${a.account_id}/site/index.html`);
  t.equal(res.headers.get('content-disposition'), null);
  t.equal(res.headers.get('content-type'), 'text/html');
});

t.test('another account cannot use a URL for its own bucket of the same name', async (t) => {
  const { app } = await listeningApp(t);
  const a = await activate(app);
  const b = await activate(app);
  await createBucket(app, a, 'assets');
  await createBucket(app, b, 'assets');
  const upA = (await presign(app, a, 'assets', 'logo.txt', { method: 'PUT' })).json();
  t.equal((await fetch(upA.url, { method: 'PUT', body: 'A' })).status, 200);
  const getB = (await presign(app, b, 'assets', 'logo.txt', { method: 'GET' })).json();
  const res = await fetch(getB.url);
  t.equal(res.status, 404, "b's bucket is b's own and has no such key");
  const getA = (await presign(app, a, 'assets', 'logo.txt', { method: 'GET' })).json();
  t.equal(await (await fetch(getA.url)).text(), 'A');
});

t.test('an upload cut off mid-body stores nothing and leaves no temp file; the old object stays', async (t) => {
  const { request } = await import('node:http');
  const { readdirSync } = await import('node:fs');
  const { Layout } = await import('../../../vendors/local-storage/layout.js');
  const { app, dir } = await listeningApp(t, { vendors: [] });
  const a = await activate(app);
  await createBucket(app, a, 'cut');
  const first = (await presign(app, a, 'cut', 'obj', { method: 'PUT' })).json();
  t.equal((await fetch(first.url, { method: 'PUT', body: 'the old bytes' })).status, 200);
  const url = (await presign(app, a, 'cut', 'obj', { method: 'PUT' })).json().url;
  await new Promise<void>((resolve) => {
    const req = request(url, { method: 'PUT', headers: { 'content-length': String(10 * 1024 * 1024) } });
    req.on('error', () => resolve());
    req.write(Buffer.alloc(1024 * 1024), () => setTimeout(() => req.destroy(), 100));
  });
  // The gateway notices the closed connection and cleans up.
  let tmp: string[] = [];
  for (let i = 0; i < 50; i++) {
    tmp = readdirSync(new Layout(dir).tmpDir(a.account_id, 'cut'));
    if (!tmp.length) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  t.same(tmp, [], 'no temp file left');
  const get = (await presign(app, a, 'cut', 'obj', { method: 'GET' })).json();
  t.equal(await (await fetch(get.url)).text(), 'the old bytes');
  const usage = (await app.inject({ method: 'GET', url: '/v1/storage/usage', headers: a.auth })).json();
  t.equal(usage.bytes_stored, 'the old bytes'.length, 'the meter saw only the stored object');
});
