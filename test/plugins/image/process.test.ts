import t from 'tap';
import exifr from 'exifr';
import sharp from 'sharp';
import { activate } from '../../helpers/app.js';
import { jpegWithGps, solidPng } from '../../fakes/test-images.js';
import { imageApp, serveBytes } from './setup.js';

// database-independent: sharp's work; the charge and the result rows are core's tests', on both.

const b64 = (b: Buffer) => b.toString('base64');

t.test(
  'POST /v1/image/process: resized and converted, saved behind a URL that works, GPS gone, charged once',
  async (t) => {
    const { app, post, balance, account_id } = await imageApp(t);
    const before = await balance();
    const input = await jpegWithGps(800, 400);
    const body = { input: { base64: b64(input) }, width: 200, format: 'webp', quality: 70, idempotency_key: 'p-1' };
    const res = await post('/v1/image/process', body);
    t.equal(res.statusCode, 200, res.body);
    const r = res.json();
    t.match(r, { mime: 'image/webp', width: 200, height: 100 });
    t.same(Object.keys(r).sort(), ['bytes', 'height', 'image_url', 'mime', 'width']);
    t.equal(res.headers['x-svc-cost-usd'], '0.001000');
    t.equal(res.headers['x-svc-vendor'], 'sharp');
    t.equal(before - (await balance()), 1000, 'plugins.image.price_usd, 0.001 USD');
    const dl = await fetch(r.image_url);
    t.equal(dl.status, 200);
    t.equal(dl.headers.get('content-type'), 'image/webp');
    const bytes = Buffer.from(await dl.arrayBuffer());
    t.equal(bytes.length, r.bytes);
    t.match(await sharp(bytes).metadata(), { format: 'webp', width: 200, height: 100 });
    t.equal(await exifr.gps(bytes).catch(() => undefined), undefined, 'no GPS in the result');

    const again = await post('/v1/image/process', body);
    t.equal(again.headers['idempotent-replayed'], 'true');
    t.equal(again.json().image_url, r.image_url);
    t.equal(before - (await balance()), 1000, 'a replay charges nothing');

    const resultId = /res_[A-Za-z0-9]+/.exec(r.image_url)![0];
    const other = await activate(app);
    await t.rejects(
      app.svc.results.url(other.account_id, resultId),
      { code: 'not_found' },
      "another account's result is not found"
    );
    t.ok(await app.svc.results.url(account_id, resultId), "the owner's is");
  }
);

t.test(
  'an operations list: rotate by EXIF, watermark, resize with fit, compress; a URL input through egress',
  async (t) => {
    const { post } = await imageApp(t);
    const url = await serveBytes(t, await jpegWithGps(300, 150, 6), 'image/jpeg');
    const mark = await solidPng(40, 40, '#ff0000');
    const res = await post('/v1/image/process', {
      input: { url },
      operations: [
        { op: 'rotate' },
        { op: 'watermark', image: { base64: b64(mark) }, position: 'top_left', opacity: 1, size: 0.5 },
        { op: 'resize', width: 100, height: 100, fit: 'inside' },
        { op: 'compress', quality: 40 },
      ],
    });
    t.equal(res.statusCode, 200, res.body);
    t.match(
      res.json(),
      { mime: 'image/jpeg', width: 50, height: 100 },
      'auto-oriented to portrait, then fitted inside 100×100'
    );
    const out = Buffer.from(await (await fetch(res.json().image_url)).arrayBuffer());
    const { data } = await sharp(out).raw().toBuffer({ resolveWithObject: true });
    t.ok(data[0] > 200 && data[1] < 80, `the red mark is at the top left (${data[0]},${data[1]},${data[2]})`);
  }
);

t.test('POST /v1/image/metadata: width, height, mime, flat EXIF', async (t) => {
  const { post, balance } = await imageApp(t);
  const before = await balance();
  const res = await post('/v1/image/metadata', { input: { base64: b64(await jpegWithGps(120, 80, 8)) } });
  t.equal(res.statusCode, 200, res.body);
  t.match(res.json(), {
    width: 80,
    height: 120,
    mime: 'image/jpeg',
    exif: { Make: 'TestCam', GPSLatitudeRef: 'N', Orientation: String },
  });
  t.equal(before - (await balance()), 100, 'plugins.image.metadata_price_usd');
});

t.test('discovery and OpenAPI list both routes with their prices (times the markup)', async (t) => {
  const { app } = await imageApp(t, { wallet: { markup: 2 }, plugins: { image: { price_usd: 0.002 } } });
  const items = (await app.inject({ url: '/v1/discovery' })).json().items as any[];
  t.match(
    items.find((i) => i.id === 'image.process'),
    {
      method: 'POST',
      path: '/v1/image/process',
      available: true,
      vendors: ['sharp'],
      billing: { unit: 'call', price_usd: 0.004 },
    }
  );
  t.match(
    items.find((i) => i.id === 'image.metadata'),
    { path: '/v1/image/metadata', billing: { unit: 'call', price_usd: 0.0002 } }
  );
  const doc = (await app.inject({ url: '/v1/openapi.json' })).json();
  t.ok(doc.paths['/v1/image/process']?.post && doc.paths['/v1/image/metadata']?.post);
});

t.test('keep_metadata: GPS and camera tags kept only when asked, the pixels oriented, the tag not kept', async (t) => {
  const { post } = await imageApp(t);
  // Orientation 6: stored 300×150, shown 150×300.
  const input = b64(await jpegWithGps(300, 150, 6));
  const result = async (body: Record<string, unknown>) => {
    const res = await post('/v1/image/process', { input: { base64: input }, ...body });
    t.equal(res.statusCode, 200, res.body);
    return Buffer.from(await (await fetch(res.json().image_url)).arrayBuffer());
  };
  for (const body of [{ width: 75 }, { width: 75, keep_metadata: false }]) {
    const out = await result(body);
    t.equal(await exifr.gps(out).catch(() => undefined), undefined, `${JSON.stringify(body)}: no GPS`);
    t.notOk((await sharp(out).metadata()).exif, 'no EXIF at all');
  }
  const chains = [
    { width: 75, keep_metadata: true },
    { width: 75, format: 'png', keep_metadata: true },
    // Several pixel steps: the EXIF travels between them too.
    {
      operations: [
        { op: 'rotate', angle: 180 },
        { op: 'watermark', text: 'x' },
        { op: 'resize', width: 75 },
      ],
      keep_metadata: true,
    },
  ];
  for (const body of chains) {
    const out = await result(body);
    const gps = await exifr.gps(out);
    t.match(gps, { latitude: Number, longitude: Number }, `${JSON.stringify(body)}: GPS kept`);
    t.ok(Math.abs(gps.latitude - 51.4667) < 0.001, 'the same position');
    t.equal((await exifr.parse(out, ['Make'])).Make, 'TestCam', 'camera tags kept');
    const meta = await sharp(out).metadata();
    t.match(meta, { width: 75, height: 150 }, 'oriented as shown');
    t.not(meta.orientation, 6, 'no orientation tag that would turn it again');
  }
});

t.test('fit contain pads with transparency where the format has it, or with `background`', async (t) => {
  const { post } = await imageApp(t);
  const input = b64(await solidPng(100, 50, '#3366cc'));
  const contain = async (format: string, background?: string) => {
    const op = { op: 'resize', width: 60, height: 60, fit: 'contain', ...(background ? { background } : {}) };
    const res = await post('/v1/image/process', { input: { base64: input }, operations: [op], format });
    t.equal(res.statusCode, 200, res.body);
    const out = Buffer.from(await (await fetch(res.json().image_url)).arrayBuffer());
    const { data, info } = await sharp(out).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    const at = (x: number, y: number) => [...data.subarray((y * 60 + x) * 4, (y * 60 + x) * 4 + 4)];
    t.equal(info.width, 60);
    return { pad: at(30, 2), image: at(30, 30) };
  };
  for (const format of ['png', 'webp']) {
    const { pad, image } = await contain(format);
    t.equal(pad[3], 0, `${format}: the padding is transparent`);
    t.equal(image[3], 255, `${format}: the image is opaque`);
  }
  const red = await contain('png', '#ff000080');
  t.same(red.pad, [255, 0, 0, 128], 'background #ff000080 fills the padding');
  t.same(
    (await contain('jpeg', '#ffffff')).pad.slice(0, 3).map((v) => v > 245),
    [true, true, true],
    'JPEG: white'
  );
  const bad = await post('/v1/image/process', {
    input: { base64: input },
    operations: [{ op: 'resize', width: 60, height: 60, fit: 'contain', background: 'red' }],
  });
  t.equal(bad.statusCode, 400);
  t.match(bad.json().error, { code: 'validation_failed', param: 'operations[0].background' });
});
