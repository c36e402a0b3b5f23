import t from 'tap';
import { pngBomb, solidPng } from '../../fakes/test-images.js';
import { imageApp, serveBytes } from './setup.js';

// database-independent: refused before any write or charge.

const b64 = (b: Buffer) => b.toString('base64');

// Bad input on every endpoint: 4xx in the conventions' shape, nothing stored, nothing charged.
t.test('bad input: the right 4xx, nothing stored, nothing charged', async (t) => {
  const { post, balance, results } = await imageApp(t);
  const before = await balance();
  const png = b64(await solidPng(8, 8));
  const truncated = b64((await solidPng(300, 300, '#123456')).subarray(0, 120));
  const cases: Array<[string, unknown, number, string, RegExp?]> = [
    ['/v1/image/process', { input: { base64: b64(Buffer.from('plain text, not an image')) } }, 422, 'unprocessable'],
    ['/v1/image/process', { input: { base64: truncated } }, 422, 'unprocessable'],
    ['/v1/image/process', { input: { base64: b64(pngBomb()) }, width: 10 }, 413, 'payload_too_large', /40 megapixels/],
    [
      '/v1/image/process',
      { input: { base64: png }, operations: [{ op: 'blur', sigma: 2 }] },
      400,
      'validation_failed',
      /^operations\[0\]\.op is not a known op: "blur"/,
    ],
    [
      '/v1/image/process',
      { input: { base64: png }, operations: [{ width: 2 }] },
      400,
      'validation_failed',
      /op is required/,
    ],
    [
      '/v1/image/process',
      { input: { base64: png }, quality: 101 },
      400,
      'validation_failed',
      /^quality must be <= 100\./,
    ],
    ['/v1/image/process', { input: { base64: png }, operations: [{ op: 'resize' }] }, 400, 'validation_failed'],
    [
      '/v1/image/process',
      { input: { base64: png }, operations: [{ op: 'watermark', opacity: 2, text: 'x' }] },
      400,
      'validation_failed',
      /^operations\[0\]\.opacity must be <= 1\.$/,
    ],
    ['/v1/image/process', { input: { base64: png, url: 'http://example.com/a.png' } }, 400, 'validation_failed'],
    ['/v1/image/process', { input: { base64: '@@not base64@@' } }, 400, 'validation_failed'],
    ['/v1/image/process', { input: { base64: '' } }, 400, 'validation_failed', /^input\.base64 is not valid base64\.$/],
    // Line-wrapped (MIME) base64 decodes: these bytes are just not an image.
    ['/v1/image/process', { input: { base64: 'QUJD\nRA=' } }, 422, 'unprocessable'],
    ['/v1/image/metadata', { input: { base64: b64(Buffer.from('%PDF-1.7 not an image')) } }, 422, 'unprocessable'],
    ['/v1/image/metadata', { input: { base64: b64(pngBomb()) } }, 413, 'payload_too_large'],
    ['/v1/image/metadata', { input: {} }, 400, 'validation_failed'],
  ];
  for (const [url, body, status, code, message] of cases) {
    const res = await post(url, body);
    t.equal(res.statusCode, status, `${url} ${JSON.stringify(body).slice(0, 90)}: ${res.body.slice(0, 200)}`);
    t.match(res.json(), { error: { code, status, request_id: /^req_/, message: message ?? String } });
  }
  t.equal(await balance(), before, 'nothing charged');
  t.equal(await results(), 0, 'nothing stored');
});

t.test('a url at loopback or the metadata service is refused by egress under the default config', async (t) => {
  const { post, balance, results } = await imageApp(t, { egress: { allow_private: false, allow_loopback: false } });
  const before = await balance();
  const local = await serveBytes(t, await solidPng(8, 8));
  for (const url of [local, 'http://169.254.169.254/latest/meta-data/']) {
    for (const [path, body] of [
      ['/v1/image/process', { input: { url } }],
      ['/v1/image/metadata', { input: { url } }],
      [
        '/v1/image/process',
        { input: { base64: b64(await solidPng(8, 8)) }, operations: [{ op: 'watermark', image: { url } }] },
      ],
    ] as const) {
      const res = await post(path, body);
      t.equal(res.statusCode, 400, res.body);
      t.match(res.json().error, {
        code: 'validation_failed',
        param: /^(input|operations\[0\]\.image)\.url$/,
        message: /(loopback|metadata|link-local) address/,
      });
    }
  }
  t.equal(await balance(), before);
  t.equal(await results(), 0);
});

t.test('an SVG or PDF said to be a PNG (data: URL, upload name and type) is 422, nothing charged', async (t) => {
  const { app, auth, post, balance, results } = await imageApp(t);
  const before = await balance();
  const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="9000" height="9000"><rect/></svg>');
  const pdf = Buffer.from('%PDF-1.7\n%%EOF\n');
  for (const bytes of [svg, pdf]) {
    for (const url of ['/v1/image/process', '/v1/image/metadata']) {
      const res = await post(url, { input: { base64: `data:image/png;base64,${b64(bytes)}` } });
      t.equal(res.statusCode, 422, res.body);
      t.match(res.json().error, { code: 'unprocessable', message: /not a JPEG, PNG, WebP, GIF, AVIF, HEIF or TIFF/ });
      const fd = new FormData();
      fd.append('input', new Blob([bytes], { type: 'image/png' }), 'photo.png');
      const req = new Request('http://localhost/', { method: 'POST', body: fd });
      const upload = await app.inject({
        method: 'POST',
        url,
        payload: Buffer.from(await req.arrayBuffer()),
        headers: { ...auth, 'content-type': req.headers.get('content-type')! },
      });
      t.equal(upload.statusCode, 422, upload.body);
      t.equal(upload.json().error.code, 'unprocessable');
    }
  }
  t.equal(await balance(), before, 'nothing charged');
  t.equal(await results(), 0, 'nothing stored');
});
