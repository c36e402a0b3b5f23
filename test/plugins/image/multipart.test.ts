import t from 'tap';
import exifr from 'exifr';
import sharp from 'sharp';
import { jpegWithGps, pixel, pngBomb, solidPng } from '../../fakes/test-images.js';
import type { Tap } from '../../helpers/tap.js';
import { imageApp } from './setup.js';

// database-independent: multipart parsing; idempotency, wallet and results are core's tests', on both.

type Field = string | { bytes: Buffer; filename?: string; type?: string };

/** A multipart/form-data body as a real client (undici's FormData, as fetch sends it) serializes it. */
async function form(fields: Array<[string, Field]>): Promise<{ payload: Buffer; type: string }> {
  const fd = new FormData();
  for (const [name, v] of fields) {
    if (typeof v === 'string') fd.append(name, v);
    else fd.append(name, new Blob([v.bytes], { type: v.type ?? 'application/octet-stream' }), v.filename ?? 'image');
  }
  const req = new Request('http://localhost/', { method: 'POST', body: fd });
  return { payload: Buffer.from(await req.arrayBuffer()), type: req.headers.get('content-type')! };
}

async function setup(t: Tap) {
  const s = await imageApp(t);
  const send = async (url: string, fields: Array<[string, Field]>, headers: Record<string, string> = {}) => {
    const { payload, type } = await form(fields);
    return s.app.inject({ method: 'POST', url, payload, headers: { ...s.auth, 'content-type': type, ...headers } });
  };
  const sendRaw = (url: string, payload: Buffer | string, type: string) =>
    s.app.inject({ method: 'POST', url, payload, headers: { ...s.auth, 'content-type': type } });
  return { ...s, send, sendRaw };
}

t.test('multipart upload: the same result as JSON, fields as form fields or one options part', async (t) => {
  const { send, balance, results } = await setup(t);
  const before = await balance();
  const input = await jpegWithGps(800, 400);
  const res = await send('/v1/image/process', [
    ['width', '200'],
    ['format', 'webp'],
    ['quality', '70'],
    ['input', { bytes: input, filename: 'photo.jpg', type: 'image/jpeg' }],
  ]);
  t.equal(res.statusCode, 200, res.body);
  const r = res.json();
  t.match(r, { mime: 'image/webp', width: 200, height: 100, bytes: Number });
  const bytes = Buffer.from(await (await fetch(r.image_url)).arrayBuffer());
  t.match(await sharp(bytes).metadata(), { format: 'webp', width: 200, height: 100 });
  t.equal(await exifr.gps(bytes).catch(() => undefined), undefined, 'GPS stripped by default');
  t.equal(before - (await balance()), 1000, 'charged as the JSON call is');

  // Stripe's and Cloudinary's name for the file, and the other fields as one JSON part.
  const opts = await send('/v1/image/process', [
    ['file', { bytes: input, filename: 'photo.jpg' }],
    ['options', JSON.stringify({ operations: [{ op: 'resize', width: 100, height: 100, fit: 'inside' }] })],
  ]);
  t.equal(opts.statusCode, 200, opts.body);
  t.match(opts.json(), { mime: 'image/jpeg', width: 100, height: 50 });
  // `operations` as a form field holds JSON.
  const ops = await send('/v1/image/process', [
    ['operations', JSON.stringify([{ op: 'rotate', angle: 90 }])],
    ['input', { bytes: input, filename: 'a.jpg' }],
  ]);
  t.equal(ops.statusCode, 200, ops.body);
  t.match(ops.json(), { width: 400, height: 800 });

  const kept = await send('/v1/image/process', [
    ['keep_metadata', 'true'],
    ['width', '200'],
    ['input', { bytes: input, filename: 'a.jpg' }],
  ]);
  t.equal(kept.statusCode, 200, kept.body);
  const keptBytes = Buffer.from(await (await fetch(kept.json().image_url)).arrayBuffer());
  t.match(await exifr.gps(keptBytes), { latitude: Number }, 'keep_metadata=true as a form field keeps GPS');

  const meta = await send('/v1/image/metadata', [['input', { bytes: input, filename: 'a.jpg' }]]);
  t.equal(meta.statusCode, 200, meta.body);
  t.match(meta.json(), { width: 800, height: 400, mime: 'image/jpeg', exif: { latitude: Number } });
  t.equal(await results(), 4, 'the four results, nothing for metadata');
});

/** A PNG of noise (so it is large: a reused upload buffer holds it) with a `color` square in its top-left corner. */
async function noisyWithCorner(width: number, height: number, color: string): Promise<Buffer> {
  const noise = { type: 'gaussian' as const, mean: 128, sigma: 60 };
  const corner = await sharp({ create: { width: 64, height: 64, channels: 3, background: color } })
    .png()
    .toBuffer();
  return sharp({ create: { width, height, channels: 3, noise } })
    .composite([{ input: corner, left: 0, top: 0 }])
    .png()
    .toBuffer();
}

t.test(
  'large uploads one after another each get their own image (upload buffers are reused after a 200)',
  async (t) => {
    const { send } = await setup(t);
    // Largest first, so a later, shorter upload lands in a buffer that held a longer one.
    const inputs: Array<[number, number, string, [number, number, number]]> = [
      [600, 400, '#ff0000', [255, 0, 0]],
      [560, 360, '#0000ff', [0, 0, 255]],
      [600, 400, '#00ff00', [0, 255, 0]],
    ];
    for (const [w, h, color, rgb] of inputs) {
      const input = await noisyWithCorner(w, h, color);
      t.ok(input.length > 256 * 1024, `a ${input.length}-byte upload`);
      const res = await send('/v1/image/process', [
        ['width', String(w / 2)],
        ['format', 'png'],
        ['input', { bytes: input, filename: 'x.png', type: 'image/png' }],
      ]);
      t.equal(res.statusCode, 200, res.body);
      t.match(res.json(), { width: w / 2, height: h / 2 });
      const out = Buffer.from(await (await fetch(res.json().image_url)).arrayBuffer());
      t.same(await pixel(out, 4, 4), rgb, `${color} came back ${color}`);
    }
  }
);

t.test('multipart idempotency: a replay needs the same image, another image under the key is 409', async (t) => {
  const { send, balance } = await setup(t);
  const before = await balance();
  const a = await solidPng(64, 64, '#112233');
  const b = await solidPng(64, 64, '#445566');
  const call = (bytes: Buffer) =>
    send('/v1/image/process', [
      ['width', '32'],
      ['idempotency_key', 'mp-1'],
      ['input', { bytes, filename: 'a.png' }],
    ]);
  const first = await call(a);
  t.equal(first.statusCode, 200, first.body);
  const again = await call(a);
  t.equal(again.headers['idempotent-replayed'], 'true');
  t.equal(again.json().image_url, first.json().image_url);
  const other = await call(b);
  t.equal(other.statusCode, 409, other.body);
  t.equal(other.json().error.code, 'idempotency_key_reused');
  t.equal(before - (await balance()), 1000, 'charged once');
});

t.test('bad multipart input: the conventions 4xx, nothing stored, nothing charged', async (t) => {
  const { send, sendRaw, balance, results } = await setup(t);
  const before = await balance();
  const png = await solidPng(16, 16);
  const file = { bytes: png, filename: 'a.png' };
  const cases: Array<[string, Promise<{ statusCode: number; body: string }>, number, string, string?, RegExp?]> = [
    ['missing file', send('/v1/image/process', [['width', '10']]), 400, 'validation_failed', 'input', /required/],
    [
      'input as a text field',
      send('/v1/image/process', [['input', 'aGVsbG8=']]),
      400,
      'validation_failed',
      'input',
      /file part/,
    ],
    [
      'two images',
      send('/v1/image/process', [
        ['input', file],
        ['file', file],
      ]),
      400,
      'validation_failed',
      'file',
    ],
    [
      'unknown field',
      send('/v1/image/process', [
        ['input', file],
        ['blur', '2'],
      ]),
      400,
      'validation_failed',
    ],
    [
      'bad number',
      send('/v1/image/process', [
        ['input', file],
        ['width', 'wide'],
      ]),
      400,
      'validation_failed',
      'width',
    ],
    [
      'quality over 100',
      send('/v1/image/process', [
        ['input', file],
        ['quality', '101'],
      ]),
      400,
      'validation_failed',
      'quality',
      /<= 100/,
    ],
    [
      'options not JSON',
      send('/v1/image/process', [
        ['input', file],
        ['options', '{width:'],
      ]),
      400,
      'validation_failed',
      'options',
    ],
    [
      'a field twice',
      send('/v1/image/process', [
        ['input', file],
        ['width', '10'],
        ['options', '{"width":12}'],
      ]),
      400,
      'validation_failed',
      'width',
    ],
    [
      'bad part (no boundary in the body)',
      sendRaw('/v1/image/process', 'just text', 'multipart/form-data; boundary=xyz'),
      400,
      'invalid_request',
    ],
    [
      'bad part (no closing boundary)',
      sendRaw(
        '/v1/image/process',
        '--xyz\r\nContent-Disposition: form-data; name="input"; filename="a"\r\n\r\nabc',
        'multipart/form-data; boundary=xyz'
      ),
      400,
      'invalid_request',
    ],
    ['no boundary', sendRaw('/v1/image/process', '--x--', 'multipart/form-data'), 400, 'invalid_request'],
    [
      'not an image',
      send('/v1/image/process', [['input', { bytes: Buffer.from('plain text, not an image'), filename: 'a.txt' }]]),
      422,
      'unprocessable',
    ],
    [
      'not an image (metadata)',
      send('/v1/image/metadata', [['input', { bytes: Buffer.from('%PDF-1.7'), filename: 'a.pdf' }]]),
      422,
      'unprocessable',
    ],
    [
      'too many pixels',
      send('/v1/image/process', [
        ['input', { bytes: pngBomb(), filename: 'bomb.png' }],
        ['width', '10'],
      ]),
      413,
      'payload_too_large',
      undefined,
      /40 megapixels/,
    ],
    [
      'too big',
      send('/v1/image/process', [['input', { bytes: Buffer.alloc(25 * 1024 * 1024 + 1), filename: 'big.jpg' }]]),
      413,
      'payload_too_large',
    ],
  ];
  for (const [name, pending, status, code, param, message] of cases) {
    const res = await pending;
    t.equal(res.statusCode, status, `${name}: ${res.body.slice(0, 300)}`);
    const err = JSON.parse(res.body).error;
    t.match(err, { code, status, request_id: /^req_/, message: message ?? String }, name);
    if (param) t.equal(err.param, param, `${name}: param`);
  }
  t.equal(await balance(), before, 'nothing charged');
  t.equal(await results(), 0, 'nothing stored');
});

t.test('OpenAPI lists both bodies; discovery keeps the JSON one', async (t) => {
  const { app } = await setup(t);
  const doc = (await app.inject({ url: '/v1/openapi.json' })).json();
  for (const path of ['/v1/image/process', '/v1/image/metadata']) {
    const content = doc.paths[path].post.requestBody.content;
    t.same(Object.keys(content).sort(), ['application/json', 'multipart/form-data'], path);
    const form = content['multipart/form-data'].schema;
    t.match(form.properties, { input: { type: 'string', contentMediaType: 'application/octet-stream' } });
    t.notOk(form.required?.includes('input'), 'the file may come as `file`');
    t.match(content['application/json'].schema, { required: ['input'] });
  }
  const form = doc.paths['/v1/image/process'].post.requestBody.content['multipart/form-data'].schema;
  t.match(form.properties, { keep_metadata: { type: 'boolean' }, options: { type: 'string' } });
  const detail = (await app.inject({ url: '/v1/discovery/image.process' })).json();
  t.match(detail.request.body, { required: ['input'], properties: { input: { type: 'object' } } });
});
