import t from 'tap';
import { activate } from '../../helpers/app.js';
import { makePdf } from '../../fakes/test-pdfs.js';
import { createBucket, presign } from '../../helpers/storage-api.js';
import { pdfApp, serveFiles } from './setup.js';

// database-independent: results in the caps; the storage meter's rows are storage/usage.test.ts's, on both.

t.test("a split's parts count in its account's storage usage while kept, and in no other's", async (t) => {
  const { app, auth, post, ...a } = await pdfApp(t);
  const other = await activate(app);
  const usage = async (headers = auth) => {
    const res = await app.inject({ method: 'GET', url: '/v1/storage/usage', headers });
    t.equal(res.statusCode, 200, res.body);
    return res.json().bytes_stored as number;
  };
  const url = await serveFiles(t, { doc: await makePdf(6) });
  t.equal(await usage(), 0);

  const res = await post('/v1/pdf/split', { url: url('doc'), ranges: ['1-3', '4-', '1-'] });
  t.equal(res.statusCode, 200, res.body);
  const bytes = res.json().parts.reduce((sum: number, p: { bytes: number }) => sum + p.bytes, 0);
  t.ok(bytes > 0);
  t.equal(await usage(), bytes, 'every part counts as stored');
  t.equal(await usage(other.auth), 0, "another account's usage is untouched");

  // Retention runs out: the sweep deletes the parts, and their bytes stop counting, once
  // however many nodes sweep them at the same time; a result kept longer still counts.
  const kept = await app.svc.results.save(a.account_id, Buffer.alloc(500), {
    contentType: 'application/pdf',
    retentionSeconds: 30 * 86_400,
  });
  t.equal(await usage(), bytes + kept.size);
  const later = Date.now() + 8 * 86_400_000;
  await Promise.all([app.svc.results.sweep(later), app.svc.results.sweep(later)]);
  t.equal(await app.svc.results.sweep(later), 0, 'the parts are gone');
  t.equal(await usage(), kept.size, 'expired results no longer count, and were taken back once');
});

t.test("results count toward the total storage cap of the account's uploads", async (t) => {
  const { app, post, ...a } = await pdfApp(t, {
    plugins: { storage: { tier_caps: { free: { max_object_bytes: 1000, max_total_bytes: 2500 } } } },
  });
  const url = await serveFiles(t, { doc: await makePdf(2) });
  const res = await post('/v1/pdf/split', { url: url('doc'), ranges: ['1', '2'] });
  t.equal(res.statusCode, 200, res.body);
  const results = res.json().parts.reduce((sum: number, p: { bytes: number }) => sum + p.bytes, 0);
  t.ok(results > 1500 && results < 2500, `the parts take ${results} of the 2500 bytes`);
  await createBucket(app, a, 'capped');
  const put = async (key: string, bytes: number) => {
    const signed = await presign(app, a, 'capped', key, { method: 'PUT' });
    const r = await fetch(signed.json().url, { method: 'PUT', body: Buffer.alloc(bytes) });
    return { status: r.status, body: await r.text() };
  };
  const over = await put('over', 1000);
  t.equal(over.status, 413, 'the results leave less than the object');
  t.match(over.body, new RegExp(`storage cap of 2.4 KiB \\(${2500 - results} bytes left\\)`));
  t.equal((await put('fits', 2500 - results)).status, 200, 'what the results leave still fits');
});
