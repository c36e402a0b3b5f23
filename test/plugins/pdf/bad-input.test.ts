import t from 'tap';
import { encryptedPdf, makePdf } from '../../fakes/test-pdfs.js';
import { pdfApp, serveFiles, STAND_INS } from './setup.js';

// database-independent: refused before any write or charge.

// Bad input on every endpoint: 4xx in the conventions' shape, nothing stored, nothing charged.
t.test('bad input: the right 4xx, nothing stored, nothing charged', async (t) => {
  const { post, balance, results } = await pdfApp(t, STAND_INS);
  const url = await serveFiles(t, {
    doc: await makePdf(3),
    enc: await encryptedPdf(),
    text: 'hello, not a PDF',
    png: 'not a png either',
  });
  const before = await balance();
  const many = (n: number, v: string) => Array.from({ length: n }, () => v);
  const cases: Array<[string, unknown, number, string, RegExp?]> = [
    ['/v1/pdf/split', { url: url('doc'), ranges: [] }, 400, 'validation_failed', /ranges/],
    [
      '/v1/pdf/split',
      { url: url('doc'), ranges: ['1-x'] },
      400,
      'validation_failed',
      /^ranges\[0\] \("1-x"\) is not a page range/,
    ],
    ['/v1/pdf/split', { url: url('doc'), ranges: ['1', '0'] }, 400, 'validation_failed', /ranges\[1\].*before page 1/],
    ['/v1/pdf/split', { url: url('doc'), ranges: ['3-1'] }, 400, 'validation_failed', /ends before it starts/],
    ['/v1/pdf/split', { url: url('doc'), ranges: many(101, '1') }, 413, 'payload_too_large', /cap of 100/],
    [
      '/v1/pdf/split',
      { url: url('doc'), ranges: ['2-5'] },
      422,
      'unprocessable',
      /2-5 is outside the document's 3 pages/,
    ],
    ['/v1/pdf/split', { url: url('doc'), ranges: ['4-'] }, 422, 'unprocessable', /outside/],
    ['/v1/pdf/split', { url: url('text'), ranges: ['1'] }, 422, 'unprocessable', /not a PDF/],
    ['/v1/pdf/split', { url: url('missing'), ranges: ['1'] }, 422, 'unprocessable', /HTTP 404/],
    ['/v1/pdf/split', { url: url('doc'), ranges: ['1'], pages: 2 }, 400, 'validation_failed'],
    ['/v1/pdf/merge', { urls: [] }, 400, 'validation_failed'],
    ['/v1/pdf/merge', { urls: many(51, url('doc')) }, 413, 'payload_too_large', /cap of 50/],
    ['/v1/pdf/merge', { urls: [url('doc'), url('text')] }, 422, 'unprocessable', /Document 2 is not a PDF/],
    ['/v1/pdf/merge', { urls: [url('enc')] }, 422, 'unprocessable', /encrypted/],
    ['/v1/pdf/merge', { urls: ['ftp://example.com/a.pdf'] }, 400, 'validation_failed', /http or https/],
    ['/v1/pdf/merge', { url: url('doc') }, 400, 'validation_failed'],
    [
      '/v1/pdf/watermark',
      { url: url('doc'), text: 'x', opacity: 2 },
      400,
      'validation_failed',
      /^opacity must be <= 1/,
    ],
    ['/v1/pdf/watermark', { url: url('doc') }, 400, 'validation_failed', /exactly one of text and image_url/],
    ['/v1/pdf/watermark', { url: url('doc'), text: 'x', image_url: url('doc') }, 400, 'validation_failed'],
    ['/v1/pdf/watermark', { url: url('doc'), image_url: url('png') }, 422, 'unprocessable', /PNG nor JPEG/],
    ['/v1/pdf/watermark', { url: url('doc'), text: 'x', position: 'middle' }, 400, 'validation_failed'],
    ['/v1/pdf/watermark', { url: url('enc'), text: 'x' }, 422, 'unprocessable', /encrypted/],
    ['/v1/pdf/ocr', { url: url('doc'), language: 'klingon!' }, 400, 'validation_failed', /language/],
    ['/v1/pdf/ocr', { url: url('doc'), lang: 'en' }, 400, 'validation_failed'],
    ['/v1/pdf/ocr', { url: url('text') }, 422, 'unprocessable', /not a readable PDF/],
    ['/v1/pdf/generate', {}, 400, 'validation_failed', /exactly one of html, url and template_id/],
    [
      '/v1/pdf/generate',
      { html: '<p>a</p>', url: url('doc') },
      400,
      'validation_failed',
      /^url cannot be sent with html/,
    ],
    ['/v1/pdf/generate', { html: '<p>a</p>', template_vars: {} }, 400, 'validation_failed', /template_id/],
    ['/v1/pdf/generate', { html: '<p>a</p>', format: 'A3' }, 400, 'validation_failed'],
    ['/v1/pdf/generate', { html: '<p>a</p>', javascript: true }, 400, 'validation_failed'],
    ['/v1/pdf/generate', { template_id: 'tpl_nope' }, 404, 'not_found'],
    ['/v1/pdf/templates', { name: 'x', html: '{{#open}} never closed' }, 400, 'validation_failed', /mustache/],
    ['/v1/pdf/templates', { name: 'x' }, 400, 'validation_failed'],
  ];
  for (const [path, body, status, code, message] of cases) {
    const res = await post(path, body);
    t.equal(res.statusCode, status, `${path} ${JSON.stringify(body).slice(0, 90)}: ${res.body.slice(0, 300)}`);
    t.match(res.json(), { error: { code, status, request_id: /^req_/, message: message ?? String } });
  }
  t.equal(await balance(), before, 'nothing charged');
  t.equal(await results(), 0, 'nothing stored');
});

t.test('private and loopback urls are refused by egress under the default config, before any charge', async (t) => {
  const { post, balance, results } = await pdfApp(t, {
    ...STAND_INS,
    egress: { allow_private: false, allow_loopback: false },
  });
  const local = await serveFiles(t, { doc: await makePdf(1) });
  const before = await balance();
  for (const target of [local('doc'), 'http://169.254.169.254/latest/meta-data/', 'http://10.0.0.7/a.pdf']) {
    for (const [path, body, param] of [
      ['/v1/pdf/merge', { urls: [target] }, 'urls[0]'],
      ['/v1/pdf/split', { url: target, ranges: ['1'] }, 'url'],
      ['/v1/pdf/watermark', { url: target, text: 'x' }, 'url'],
      ['/v1/pdf/ocr', { url: target }, 'url'],
      ['/v1/pdf/generate', { url: target }, 'url'],
    ] as const) {
      const res = await post(path, body);
      t.equal(res.statusCode, 400, `${path} ${target}: ${res.body}`);
      t.match(res.json().error, {
        code: 'validation_failed',
        param,
        message: /(loopback|metadata|link-local|private) address/,
      });
    }
  }
  t.equal(await balance(), before);
  t.equal(await results(), 0);
});
