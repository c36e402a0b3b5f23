import t from 'tap';
import { Readable } from 'node:stream';
import { activate, generated, sha256Of, urlExpiry } from '../../plugins/storage/helpers.js';
import { listeningApp } from '../../helpers/listening-app.js';

const DAY = 86_400_000;

t.test('save bytes, get a signed GET URL with content type, download name and expiry', async (t) => {
  const { app } = await listeningApp(t);
  const a = await activate(app);
  const png = Buffer.from('\x89PNG not really an image');
  const saved = await app.svc.results.save(a.account_id, png, { contentType: 'image/png', filename: 'chat cat é.png' });
  t.match(saved.result_id, /^res_/);
  t.equal(saved.size, png.length);
  t.ok(Math.abs(saved.delete_at - (Date.now() + 7 * DAY)) < 10_000, 'kept 7 days by default');
  t.ok(Math.abs(saved.url_expires_at - (Date.now() + 7 * DAY)) < 10_000, 'URL valid while the result is kept');
  const res = await fetch(saved.url);
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'image/png');
  t.equal(
    res.headers.get('content-disposition'),
    `attachment; filename="chat cat _.png"; filename*=UTF-8''chat%20cat%20%C3%A9.png`
  );
  t.same(Buffer.from(await res.arrayBuffer()), png);
  const tampered = await fetch(saved.url.replace('attachment', 'inline'));
  t.equal(tampered.status, 403, 'the response headers are signed');

  const fresh = await app.svc.results.url(a.account_id, saved.result_id, 60);
  t.ok(fresh.expiresAt < Date.now() + 61_000);
  // SigV4 signs whole seconds: the expiry said must never be after the URL stops working.
  const stops = Date.parse(urlExpiry(fresh.url));
  t.equal(fresh.expiresAt, stops, "expires_at is the URL's own expiry");
  // Also when the URL is signed in a later second than the call began (the fallback, counted
  // from the call's second, would then be early): hold the signer until the second turns.
  const settings = (app.svc.results as any).settings;
  const presign = settings.presign;
  settings.presign = async (r: unknown) => {
    await new Promise((res) => setTimeout(res, 1001 - (Date.now() % 1000)));
    return presign(r);
  };
  const late = await app.svc.results.url(a.account_id, saved.result_id, 60);
  settings.presign = presign;
  t.equal(late.expiresAt, Date.parse(urlExpiry(late.url)), "signed in the next second: still the URL's own expiry");
  t.equal((await fetch(fresh.url)).status, 200);
  const b = await activate(app);
  await t.rejects(
    app.svc.results.url(b.account_id, saved.result_id),
    { code: 'not_found' },
    "another account's result is 404"
  );
});

t.test('streams of unknown length are saved without buffering; HTML results stay attachments', async (t) => {
  const { app } = await listeningApp(t);
  const a = await activate(app);
  const size = 3 * 1024 * 1024 + 17;
  const saved = await app.svc.results.save(a.account_id, Readable.from(generated(size, 5)), {
    contentType: 'audio/mpeg',
    filename: 'speech.mp3',
    urlExpiresSeconds: 120,
  });
  t.equal(saved.size, size);
  t.ok(saved.url_expires_at <= Date.now() + 121_000);
  const res = await fetch(saved.url);
  t.same(await sha256Of(res.body as any), await sha256Of(generated(size, 5)));
  const html = await app.svc.results.save(a.account_id, Buffer.from('<script>x</script>'), {
    contentType: 'text/html',
    filename: 'page.html',
    inline: true,
  });
  const page = await fetch(html.url);
  t.match(page.headers.get('content-disposition'), /^attachment/, 'inline HTML from the gateway origin is refused');
  t.equal(page.headers.get('x-content-type-options'), 'nosniff');
});

t.test('retention deletes results and their URLs stop working', async (t) => {
  const { app } = await listeningApp(t);
  const a = await activate(app);
  const short = await app.svc.results.save(a.account_id, Buffer.from('short-lived'), {
    contentType: 'text/plain',
    retentionSeconds: 60,
  });
  const long = await app.svc.results.save(a.account_id, Buffer.from('kept'), { contentType: 'text/plain' });
  t.equal(await app.svc.results.sweep(Date.now() + 61_000), 1);
  const gone = await fetch(short.url);
  t.equal(gone.status, 404);
  t.match(await gone.text(), /NoSuchKey/);
  await t.rejects(app.svc.results.url(a.account_id, short.result_id), { code: 'not_found' });
  t.equal((await fetch(long.url)).status, 200);
  const rows = await app.svc.db.selectFrom('results').select('result_id').execute();
  t.same(
    rows.map((r) => r.result_id),
    [long.result_id]
  );
});

t.test('the results bucket is reserved and read-only', async (t) => {
  const { app } = await listeningApp(t);
  const a = await activate(app);
  const res = await app.inject({
    method: 'POST',
    url: '/v1/storage/buckets',
    headers: a.auth,
    payload: { bucket: 'svc-results' },
  });
  t.equal(res.statusCode, 400);
  const saved = await app.svc.results.save(a.account_id, Buffer.from('x'), { contentType: 'text/plain' });
  const put = await fetch(saved.url, { method: 'PUT', body: 'overwrite' });
  t.equal(put.status, 403);
  t.equal(await (await fetch(saved.url)).text(), 'x');
});
