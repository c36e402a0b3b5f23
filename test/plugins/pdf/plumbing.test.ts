import t from 'tap';
import { makePdf, pageTexts } from '../../fakes/test-pdfs.js';
import { pdfApp, serveFiles, STAND_IN_OCR, STAND_INS } from './setup.js';

// generate and ocr through the routes, on stand-in engines (test/plugins/pdf/stand-in-*.ts):
// what the area hands an engine and what it does with the answer. The real chromium and
// tesseract engines are tested in generate.test.ts and ocr.test.ts.

t.test('generate from html: rendered, saved, charged base + pages; subresources go through egress', async (t) => {
  const { post, balance, results, download } = await pdfApp(t, {
    ...STAND_INS,
    egress: { allow_private: false, allow_loopback: true },
  });
  const url = await serveFiles(t, { 'logo.png': 'png bytes' }, { 'logo.png': 'image/png' });
  const before = await balance();
  const html =
    `<h1>Invoice</h1><img src="${url('logo.png')}"><img src="http://169.254.169.254/x.png">`
    + '<div style="page-break-before: always">Second</div>';
  const res = await post('/v1/pdf/generate', { html, format: 'Letter', orientation: 'landscape' });
  t.equal(res.statusCode, 200, res.body);
  t.match(res.json(), { pages: 2, bytes: Number, pdf_url: /^http/ });
  t.equal(res.headers['x-svc-vendor'], 'stand-in-render');
  const texts = await pageTexts((await download(res.json().pdf_url)).data);
  t.match(texts[0], /Invoice \[img 200\] \[img refused\]/, 'loopback allowed by the config, metadata never');
  t.match(texts[1], /Second/);
  // Defaults: 0.002 a document + 0.0005 a page.
  t.equal(before - (await balance()), 2000 + 2 * 500);
  t.equal(await results(), 1);
});

t.test('generate from html: a loopback <img> is refused under the default egress config', async (t) => {
  const { post, download } = await pdfApp(t, { ...STAND_INS, egress: { allow_private: false, allow_loopback: false } });
  const url = await serveFiles(t, { 'logo.png': 'png bytes' }, { 'logo.png': 'image/png' });
  const res = await post('/v1/pdf/generate', { html: `<p>Hi</p><img src="${url('logo.png')}">` });
  t.equal(res.statusCode, 200, res.body);
  t.match((await pageTexts((await download(res.json().pdf_url)).data))[0], /Hi \[img refused\]/);
});

t.test(
  'generate from a url (fetched by the engine through egress) and from a template with escaped vars',
  async (t) => {
    const { post, download } = await pdfApp(t, STAND_INS);
    const url = await serveFiles(t, { 'page.html': '<h1>Remote page</h1>' }, { 'page.html': 'text/html' });
    const res = await post('/v1/pdf/generate', { url: url('page.html') });
    t.equal(res.statusCode, 200, res.body);
    t.match((await pageTexts((await download(res.json().pdf_url)).data))[0], /Remote page/);

    const tpl = (await post('/v1/pdf/templates', { name: 'hello', html: '<p>Hello {{name}} / {{{raw}}}</p>' })).json();
    const gen = await post('/v1/pdf/generate', {
      template_id: tpl.template_id,
      template_vars: { name: '<b>Ann & Bob</b>', raw: 'R' },
    });
    t.equal(gen.statusCode, 200, gen.body);
    const text = (await pageTexts((await download(gen.json().pdf_url)).data))[0];
    // Escaped: the tags arrive as text (&lt;b&gt;), not as markup the stand-in would strip.
    t.equal(text, 'Hello &lt;b&gt;Ann &amp; Bob&lt;&#x2F;b&gt; / R');
  }
);

t.test("scripts run only when the operator says so (plugins.pdf.javascript), never by the caller's body", async (t) => {
  for (const javascript of [false, true]) {
    const { post, download } = await pdfApp(t, { ...STAND_INS, plugins: { pdf: { javascript } } });
    const res = await post('/v1/pdf/generate', { html: '<p>Hi</p>' });
    t.equal(res.statusCode, 200, res.body);
    const text = (await pageTexts((await download(res.json().pdf_url)).data))[0];
    t.equal(text.includes('[js]'), javascript, `javascript: ${javascript}`);
  }
});

t.test('ocr: the language hint reaches the engine as tesseract codes; charged per page read', async (t) => {
  const { post, balance, results } = await pdfApp(t, STAND_INS);
  const url = await serveFiles(t, { doc: await makePdf(3) });
  for (const [language, codes] of [
    [undefined, 'eng'],
    ['en', 'eng'],
    ['de', 'deu'],
    ['eng+deu', 'eng+deu'],
    ['zh-Hant', 'chi_tra'],
  ] as const) {
    const before = await balance();
    const res = await post('/v1/pdf/ocr', { url: url('doc'), ...(language ? { language } : {}) });
    t.equal(res.statusCode, 200, res.body);
    t.equal(res.json().pages.length, 3);
    t.equal(res.json().pages[2].text, `page 3 ${codes}`);
    t.match(res.json().text, /page 1/);
    t.equal(before - (await balance()), 3 * 2000, 'three pages at 0.002');
  }
  t.equal(await results(), 0, 'ocr stores nothing');
});

t.test('no engine for pdf.render: generate is 503 saying how to install Chromium; the rest still works', async (t) => {
  // Routing pdf.render to an instance that does not serve it leaves none, as a machine without Chromium would.
  const { app, post, balance } = await pdfApp(t, {
    vendors: [{ id: 'ocr-only', use: STAND_IN_OCR }],
    routes: { 'pdf.render': { targets: ['ocr-only'] } },
  });
  const before = await balance();
  const res = await post('/v1/pdf/generate', { html: '<p>x</p>' });
  t.equal(res.statusCode, 503, res.body);
  t.match(res.json().error, {
    code: 'no_vendor_available',
    message: /apt-get install -y chromium.*executable_path/s,
  });
  t.equal(await balance(), before);
  const url = await serveFiles(t, { doc: await makePdf(2) });
  t.equal((await post('/v1/pdf/split', { url: url('doc'), ranges: ['1'] })).statusCode, 200);
  const discovery = (await app.inject({ method: 'GET', url: '/v1/discovery' })).json();
  const generate = discovery.items.find((i: any) => i.id === 'pdf.generate');
  t.match(generate, { available: false, reason: /apt-get install -y chromium/ });
});

t.test('discovery and OpenAPI list every PDF route with its price', async (t) => {
  const { app } = await pdfApp(t, STAND_INS);
  const items = (await app.inject({ method: 'GET', url: '/v1/discovery' })).json().items;
  const pdf = Object.fromEntries(items.filter((i: any) => i.path.startsWith('/v1/pdf')).map((i: any) => [i.id, i]));
  t.match(pdf['pdf.generate'], { method: 'POST', available: true, billing: { unit: 'document', price_usd: 0.002 } });
  t.match(pdf['pdf.merge'], { billing: { unit: 'document', price_usd: 0.001 } });
  t.match(pdf['pdf.split'], { billing: { unit: 'document', price_usd: 0.001 } });
  t.match(pdf['pdf.watermark'], { billing: { unit: 'document', price_usd: 0.001 } });
  t.match(pdf['pdf.ocr'], { billing: { unit: 'page', price_usd: 0.002 } });
  for (const id of ['pdf.templates.create', 'pdf.templates.list', 'pdf.templates.get', 'pdf.templates.delete'])
    t.ok(pdf[id], id);
  const openapi = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
  for (const p of ['generate', 'merge', 'split', 'ocr', 'watermark']) t.ok(openapi.paths[`/v1/pdf/${p}`]?.post, p);
  t.match(openapi.paths['/v1/pdf/generate'].post.description, /0\.0005 USD a page/);
  t.ok(openapi.paths['/v1/pdf/templates/{template_id}']?.delete);
});
