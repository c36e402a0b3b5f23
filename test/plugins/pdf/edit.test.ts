import t from 'tap';
import { encryptedPdf, makePdf, pageCount, pageTexts, solidPng } from '../../fakes/test-pdfs.js';
import { pdfApp, serveFiles } from './setup.js';

// database-independent: pdf-lib's work; idempotency, wallet and results are core's tests', on both.

t.test('merge: one PDF of every page in order, saved, charged the flat price once', async (t) => {
  const { post, balance, results, download } = await pdfApp(t);
  const url = await serveFiles(t, { a: await makePdf(2), b: await makePdf(3) });
  const before = await balance();
  const res = await post('/v1/pdf/merge', { urls: [url('a'), url('b'), url('a')] });
  t.equal(res.statusCode, 200, res.body);
  const body = res.json();
  t.match(body, { pdf_url: /^http/, pages: 7, bytes: Number });
  t.equal(res.headers['x-svc-vendor'], 'pdf-lib');
  t.equal(Number(res.headers['x-svc-cost-usd']), 0.001);
  const file = await download(body.pdf_url);
  t.equal(file.type, 'application/pdf');
  t.equal(file.data.length, body.bytes);
  t.equal(await pageCount(file.data), 7);
  t.same((await pageTexts(file.data)).slice(1, 3), ['Page 2', 'Page 1']);
  t.equal(await results(), 1);
  t.equal(before - (await balance()), 1000, 'micro-USD');
});

t.test('split: one part a range, page counts and contents; 4- runs to the end', async (t) => {
  const { post, results, download } = await pdfApp(t);
  const url = await serveFiles(t, { doc: await makePdf(6) });
  const res = await post('/v1/pdf/split', { url: url('doc'), ranges: ['1-3', '4-', '2'] });
  t.equal(res.statusCode, 200, res.body);
  const { parts } = res.json();
  t.same(
    parts.map((p: any) => p.pages),
    [3, 3, 1]
  );
  t.same(await pageTexts((await download(parts[1].pdf_url)).data), ['Page 4', 'Page 5', 'Page 6']);
  t.same(await pageTexts((await download(parts[2].pdf_url)).data), ['Page 2']);
  t.equal(await results(), 3);
});

t.test('watermark: text on every page (read back), defaults diagonal; an image watermark too', async (t) => {
  const { post, download } = await pdfApp(t);
  const url = await serveFiles(t, { doc: await makePdf(3), logo: await solidPng() }, { logo: 'image/png' });
  const res = await post('/v1/pdf/watermark', { url: url('doc'), text: 'CONFIDENTIAL', opacity: 0.2 });
  t.equal(res.statusCode, 200, res.body);
  t.equal(res.json().pages, 3);
  const texts = await pageTexts((await download(res.json().pdf_url)).data);
  t.equal(texts.length, 3);
  for (const text of texts) t.match(text, /CONFIDENTIAL/);
  const img = await post('/v1/pdf/watermark', { url: url('doc'), image_url: url('logo'), position: 'bottom_right' });
  t.equal(img.statusCode, 200, img.body);
  const raw = (await download(img.json().pdf_url)).data;
  t.equal(await pageCount(raw), 3);
});

t.test('page prices: base plus pages, reserved up to reserve_pages, settled by the pages made', async (t) => {
  const { post, balance } = await pdfApp(t, {
    plugins: { pdf: { merge_price_usd: 0.001, merge_page_price_usd: 0.0001, reserve_pages: 50 } },
  });
  const url = await serveFiles(t, { a: await makePdf(4) });
  const before = await balance();
  const res = await post('/v1/pdf/merge', { urls: [url('a'), url('a')] });
  t.equal(res.statusCode, 200, res.body);
  t.equal(Number(res.headers['x-svc-cost-usd']), 0.0018, '0.001 + 8 pages x 0.0001');
  t.equal(before - (await balance()), 1800, 'micro-USD');
});

t.test('an encrypted PDF is 422 with a clear message; nothing stored or charged', async (t) => {
  const { post, balance, results } = await pdfApp(t);
  const url = await serveFiles(t, { enc: await encryptedPdf(), ok: await makePdf(1) });
  const before = await balance();
  for (const [path, body] of [
    ['/v1/pdf/merge', { urls: [url('ok'), url('enc')] }],
    ['/v1/pdf/split', { url: url('enc'), ranges: ['1'] }],
    ['/v1/pdf/watermark', { url: url('enc'), text: 'x' }],
  ] as const) {
    const res = await post(path, body);
    t.equal(res.statusCode, 422, res.body);
    t.match(res.json().error, { code: 'unprocessable', status: 422, message: /encrypted/ });
  }
  t.equal(await balance(), before);
  t.equal(await results(), 0);
});

t.test('idempotency: the same key and body answer the same result, stored and charged once', async (t) => {
  const { post, balance, results } = await pdfApp(t);
  const url = await serveFiles(t, { doc: await makePdf(2) });
  const before = await balance();
  const body = { url: url('doc'), text: 'PAID', idempotency_key: 'wm-1' };
  const first = await post('/v1/pdf/watermark', body);
  const again = await post('/v1/pdf/watermark', body);
  t.equal(first.statusCode, 200, first.body);
  t.equal(again.headers['idempotent-replayed'], 'true');
  t.equal(again.json().pdf_url, first.json().pdf_url);
  t.equal(before - (await balance()), 1000);
  t.equal(await results(), 1);
});
