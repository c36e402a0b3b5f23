import t from 'tap';
import { activate } from '../../plugins/storage/helpers.js';
import { listeningApp } from '../../helpers/listening-app.js';
import { makeApp } from '../../helpers/app.js';
import { newId } from '../../../core/ids.js';
import { s3rver } from '../../helpers/s3rver.js';

// database-independent: serving public result URLs; the result rows are result-store.test.ts's, on both.

// Public result URLs (plugins.storage.results_public): unsigned, valid until retention
// deletes the result, served with the content type and download name they were saved with.

// `vendors: []` keeps these on local-storage when the suite runs with SVC_TEST_STORAGE=s3.
const PUBLIC = { vendors: [], plugins: { storage: { results_public: true } } };
const png = Buffer.from('\x89PNG public result');

t.test(
  'local-storage: an unsigned URL at the S3 endpoint, with type and download name, until the result is deleted',
  async (t) => {
    const { app, base } = await listeningApp(t, PUBLIC);
    const a = await activate(app);
    const saved = await app.svc.results.save(a.account_id, png, {
      contentType: 'image/png',
      filename: 'chat cat é.png',
      retentionSeconds: 3600,
    });
    t.equal(
      saved.url,
      `${base}/s3/${a.account_id}/svc-results-public/${saved.result_id}/chat%20cat%20%C3%A9.png`,
      'no signature in the URL'
    );
    t.equal(saved.url_expires_at, saved.delete_at, 'the URL lasts as long as the result');
    const res = await fetch(saved.url);
    t.equal(res.status, 200);
    t.equal(res.headers.get('content-type'), 'image/png');
    t.equal(
      res.headers.get('content-disposition'),
      `attachment; filename="chat cat _.png"; filename*=UTF-8''chat%20cat%20%C3%A9.png`
    );
    t.same(Buffer.from(await res.arrayBuffer()), png);
    const head = await app.inject({ method: 'HEAD', url: new URL(saved.url).pathname });
    t.equal(head.statusCode, 200);
    t.equal(head.headers['content-length'], String(png.length));

    const again = await app.svc.results.url(a.account_id, saved.result_id, 60);
    t.same(again, { url: saved.url, expiresAt: saved.delete_at }, 'asking again gives the same public URL');

    const inline = await app.svc.results.save(a.account_id, png, {
      contentType: 'image/png',
      filename: 'shown.png',
      inline: true,
    });
    t.match((await fetch(inline.url)).headers.get('content-disposition'), /^inline; filename="shown.png"/);
    const html = await app.svc.results.save(a.account_id, Buffer.from('<script>x</script>'), {
      contentType: 'text/html',
      filename: 'page.html',
      inline: true,
    });
    t.match(
      (await fetch(html.url)).headers.get('content-disposition'),
      /^attachment/,
      'HTML from the gateway origin stays an attachment'
    );

    t.equal(await app.svc.results.sweep(Date.now() + 3601_000), 1, 'the others are kept 7 days');
    const gone = await fetch(saved.url);
    t.equal(gone.status, 404);
    t.match(await gone.text(), /NoSuchKey/);
    await t.rejects(app.svc.results.url(a.account_id, saved.result_id), { code: 'not_found' });
  }
);

t.test('local-storage: public URLs are capabilities; nothing else is readable or writable through them', async (t) => {
  const { app } = await listeningApp(t, PUBLIC);
  const a = await activate(app);
  const b = await activate(app);
  const saved = await app.svc.results.save(a.account_id, png, { contentType: 'image/png', filename: 'x.png' });
  const path = new URL(saved.url).pathname;
  const get = (url: string) => app.inject({ method: 'GET', url });
  t.equal((await get(path.replace(saved.result_id, newId('res')))).statusCode, 404, 'a guessed result id');
  t.equal((await get(path.replace(a.account_id, b.account_id))).statusCode, 404, 'the id under another account');
  t.equal(
    (await get(path.replace('svc-results-public', 'svc-results'))).statusCode,
    404,
    'a public result is not in the private results bucket'
  );
  t.equal(
    (await get(`/s3/${a.account_id}/svc-results-public`)).statusCode,
    403,
    'the public results bucket cannot be listed'
  );
  t.equal((await app.inject({ method: 'PUT', url: path, payload: 'overwrite' })).statusCode, 403);
  t.equal((await app.inject({ method: 'DELETE', url: path })).statusCode, 403);
  t.same((await get(path)).rawPayload, png, 'unchanged');
  const reserved = await app.inject({
    method: 'POST',
    url: '/v1/storage/buckets',
    headers: a.auth,
    payload: { bucket: 'svc-results-public' },
  });
  t.equal(reserved.statusCode, 400);
});

t.test('a private result is never served unsigned from the public bucket', async (t) => {
  const { app } = await listeningApp(t, { vendors: [] });
  const a = await activate(app);
  const saved = await app.svc.results.save(a.account_id, png, { contentType: 'image/png', filename: 'x.png' });
  t.match(saved.url, /X-Amz-Signature=/);
  const key = `${saved.result_id}/x.png`;
  t.equal(
    (await app.inject({ method: 'GET', url: `/s3/${a.account_id}/svc-results/${key}` })).statusCode,
    403,
    'unsigned: AccessDenied'
  );
  t.equal((await app.inject({ method: 'GET', url: `/s3/${a.account_id}/svc-results-public/${key}` })).statusCode, 404);
});

t.test('local-storage behind a CDN: the base URL replaces the endpoint', async (t) => {
  const { app } = await listeningApp(t, {
    vendors: [],
    plugins: { storage: { results_public: true, results_public_base_url: 'https://cdn.example.com/s3' } },
  });
  const a = await activate(app);
  const saved = await app.svc.results.save(a.account_id, png, { contentType: 'image/png', filename: 'x.png' });
  t.equal(saved.url, `https://cdn.example.com/s3/${a.account_id}/svc-results-public/${saved.result_id}/x.png`);
});

t.test('results_public on a remote vendor without a base URL is refused at boot', async (t) => {
  const s3 = {
    id: 'remote',
    use: 's3',
    config: { bucket: 'b', endpoint: 'http://127.0.0.1:9', force_path_style: true },
  };
  await t.rejects(
    makeApp(t, { ...PUBLIC, vendors: [s3] }),
    /results_public_base_url.*"remote" \(s3\)|"remote" \(s3\).*results_public_base_url/
  );
  await t.rejects(
    makeApp(t, { plugins: { storage: { results_public_base_url: 'https://cdn.example.com/' } } }),
    /results_public_base_url/,
    'a trailing "/" is refused'
  );
});

for (const adapter of ['s3', 'minio']) {
  t.test(
    `${adapter}: the URL is the base URL and the vendor's object path; type and name are stored with the object`,
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
        plugins: { storage: { results_public: true, results_public_base_url: `${endpoint}/backing` } },
      });
      const a = await activate(app);
      const saved = await app.svc.results.save(a.account_id, png, {
        contentType: 'image/png',
        filename: 'chat cat.png',
        retentionSeconds: 60,
      });
      t.equal(saved.url, `${endpoint}/backing/gw/${a.account_id}/svc-results-public/${saved.result_id}/chat%20cat.png`);
      const res = await fetch(saved.url);
      t.equal(res.status, 200);
      t.equal(res.headers.get('content-type'), 'image/png');
      t.equal(
        res.headers.get('content-disposition'),
        `attachment; filename="chat cat.png"; filename*=UTF-8''chat%20cat.png`
      );
      t.same(Buffer.from(await res.arrayBuffer()), png);
      t.same(await app.svc.results.url(a.account_id, saved.result_id), { url: saved.url, expiresAt: saved.delete_at });
      t.equal(await app.svc.results.sweep(Date.now() + 61_000), 1);
      t.equal((await fetch(saved.url)).status, 404, 'deleted from the vendor by the retention sweep');
    }
  );
}
