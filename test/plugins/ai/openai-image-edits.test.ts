import t from 'tap';
import OpenAI, { toFile } from 'openai';
import { mediaApp } from './media-setup.js';
import { imageType, makePng } from '../../fakes/images.js';

// database-independent: the OpenAI image edit surface; the wallet and results are core's tests', on both.

// The built-in catalog's dall-e-2 (0.02 USD an image, edits and variations) and gpt-image-1
// (0.063, edits) on the OpenAI fake `oa`, next to the media test models.
async function sdk(t: any, overrides: Record<string, any> = {}) {
  const env = await mediaApp(t, overrides, { oaModels: ['pix', 'gpt-image-1', 'dall-e-2', 'dall-e-3'] });
  return { ...env, client: new OpenAI({ apiKey: env.key, baseURL: `${env.base}/v1/openai`, maxRetries: 0 }) };
}

t.test('images.edit with the official SDK: one PNG as `image`, saved as a signed URL, charged per image', async (t) => {
  const { client, app, accountId, oa, base } = await sdk(t);
  const png = makePng(16, 16, [200, 10, 10]);
  const before = await app.svc.wallet.balance(accountId);
  const r = await client.images
    .edit({
      model: 'dall-e-2',
      image: await toFile(png, 'cat.png', { type: 'image/png' }),
      prompt: 'add a hat',
      size: '256x256',
    })
    .withResponse();
  t.equal(r.data.data!.length, 1);
  t.type(r.data.created, 'number');
  const url = r.data.data![0].url!;
  t.notOk(r.data.data![0].b64_json, 'URL format by default');
  const bytes = Buffer.from(await (await fetch(url)).arrayBuffer());
  t.equal(imageType(bytes), 'image/png');
  t.equal(bytes.readUInt32BE(16), 256, "the vendor's image, as made");
  t.ok(url.startsWith(base), "the gateway's result URL, not the vendor's");

  const got = oa.uploads.received.at(-1)!;
  t.equal(got.path, '/images/edits');
  t.same(got.fields, { prompt: 'add a hat', model: 'dall-e-2', n: '1', size: '256x256', response_format: 'b64_json' });
  t.equal(got.images.length, 1);
  t.equal(got.images[0].field, 'image');
  t.equal(got.images[0].type, 'image/png');
  t.ok(got.images[0].bytes.equals(png), "the caller's bytes, unchanged");
  t.notOk(got.mask);
  t.equal(oa.requests.at(-1)!.headers.authorization, 'Bearer sk-oa');
  t.equal(r.response.headers.get('x-svc-vendor'), 'oa');
  t.equal(r.response.headers.get('x-svc-cost-usd'), '0.020000');
  t.equal(before - (await app.svc.wallet.balance(accountId)), 20_000, 'dall-e-2: 0.02 USD an image');
});

t.test('several images as `image[]` with a mask, gpt-image-1, b64_json', async (t) => {
  const { client, app, accountId, oa } = await sdk(t);
  const a = makePng(8, 8, [1, 2, 3]);
  const b = makePng(8, 8, [4, 5, 6]);
  const mask = makePng(8, 8, [0, 0, 0]);
  const before = await app.svc.wallet.balance(accountId);
  const r = await client.images.edit({
    model: 'gpt-image-1',
    prompt: 'a gift basket with both',
    n: 2,
    response_format: 'b64_json' as any,
    image: [await toFile(a, 'a.png', { type: 'image/png' }), await toFile(b, 'b.png', { type: 'image/png' })],
    mask: await toFile(mask, 'mask.png', { type: 'image/png' }),
    quality: 'high',
    input_fidelity: 'high',
  });
  t.equal(r.data!.length, 2);
  for (const d of r.data!) {
    t.notOk(d.url);
    t.equal(imageType(Buffer.from(d.b64_json!, 'base64')), 'image/png');
  }
  const got = oa.uploads.received.at(-1)!;
  t.same(
    got.images.map((i) => i.field),
    ['image[]', 'image[]'],
    'several images travel as image[] as OpenAI takes them'
  );
  t.ok(got.images[0].bytes.equals(a) && got.images[1].bytes.equals(b), "in the caller's order");
  t.ok(got.mask!.bytes.equals(mask));
  t.same(
    got.fields,
    { prompt: 'a gift basket with both', model: 'gpt-image-1', n: '2', quality: 'medium' },
    'gpt-image gets no response_format; quality as priced'
  );
  t.equal(before - (await app.svc.wallet.balance(accountId)), 2 * 63_000);

  // `auto` routes among the models that edit: never dall-e-3, which cannot.
  await client.images.edit({ model: 'auto', image: await toFile(a, 'a.png'), prompt: 'x' });
  t.not(oa.uploads.received.at(-1)!.fields.model, 'dall-e-3');
  const none = await client.images
    .edit({ model: 'dall-e-3', image: await toFile(a, 'a.png'), prompt: 'x' })
    .catch((e) => e);
  t.equal(none.status, 503);
  t.equal(none.code, 'no_vendor_available');
});

t.test('bad uploads are refused before anything is sent or charged', async (t) => {
  const { client, app, accountId, oa, base, key } = await sdk(t);
  const png = makePng(4, 4, [9, 9, 9]);
  const gif = Buffer.concat([Buffer.from('GIF89a'), Buffer.alloc(20)]);
  const before = await app.svc.wallet.balance(accountId);
  const sent = oa.requests.length;
  const edit = (body: any) => client.images.edit({ model: 'dall-e-2', prompt: 'x', ...body }).catch((e) => e);
  const cases: Array<[string, Promise<any>, number, string, string | null]> = [
    [
      '17 images',
      (async () => edit({ image: await Promise.all(Array.from({ length: 17 }, (_, i) => toFile(png, `${i}.png`))) }))(),
      413,
      'payload_too_large',
      'image',
    ],
    [
      'not an image',
      (async () => edit({ image: await toFile(Buffer.from('hello, not a picture'), 'a.png') }))(),
      422,
      'unprocessable',
      'image',
    ],
    ['a GIF', (async () => edit({ image: await toFile(gif, 'a.gif') }))(), 422, 'unprocessable', 'image'],
    [
      'a JPEG mask',
      (async () =>
        edit({
          image: await toFile(png, 'a.png'),
          mask: await toFile(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0]), 'm.jpg'),
        }))(),
      422,
      'unprocessable',
      'mask',
    ],
    [
      'a mask over 4 MiB',
      (async () =>
        edit({
          image: await toFile(png, 'a.png'),
          mask: await toFile(Buffer.concat([png, Buffer.alloc(4 * 1024 * 1024)]), 'm.png'),
        }))(),
      413,
      'payload_too_large',
      'mask',
    ],
    [
      'no prompt',
      (async () => edit({ image: await toFile(png, 'a.png'), prompt: '' }))(),
      400,
      'validation_failed',
      'prompt',
    ],
    ['n 11', (async () => edit({ image: await toFile(png, 'a.png'), n: 11 }))(), 400, 'validation_failed', 'n'],
    [
      'a bad size',
      (async () => edit({ image: await toFile(png, 'a.png'), size: 'big' }))(),
      400,
      'validation_failed',
      'size',
    ],
    [
      'a bad response_format',
      (async () => edit({ image: await toFile(png, 'a.png'), response_format: 'png' }))(),
      400,
      'validation_failed',
      'response_format',
    ],
  ];
  for (const [what, p, status, code, param] of cases) {
    const e = await p;
    t.equal(e.status, status, what);
    t.equal(e.code, code, what);
    t.equal(e.param, param, what);
    t.equal(e.type, 'invalid_request_error', `${what}: OpenAI's error shape`);
  }
  const noImage = await fetch(`${base}/v1/openai/images/edits`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: (() => {
      const f = new FormData();
      f.append('prompt', 'x');
      return f;
    })(),
  });
  t.equal(noImage.status, 400);
  t.match(await noImage.json(), { error: { param: 'image', code: 'validation_failed' } });
  const json = await fetch(`${base}/v1/openai/images/edits`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: '{"prompt":"x"}',
  });
  t.equal(json.status, 415);
  t.equal(oa.requests.length, sent, 'the vendor was never called');
  t.equal(await app.svc.wallet.balance(accountId), before, 'nothing charged');
});

t.test('a file over the per-file cap is 413 while it is read', async (t) => {
  const { client, oa } = await sdk(t, { limits: { large_body_bytes: 1024 * 1024 } });
  const big = Buffer.concat([makePng(4, 4, [1, 1, 1]), Buffer.alloc(1024 * 1024 + 10)]);
  const e = await client.images
    .edit({ model: 'dall-e-2', prompt: 'x', image: await toFile(big, 'a.png') })
    .catch((err) => err);
  t.equal(e.status, 413);
  t.equal(e.code, 'payload_too_large');
  t.match(e.message, /1048576 bytes/);
  t.equal(oa.uploads.received.length, 0);
});

t.test('a vendor refusing the edit (dall-e-2 wants a square PNG) is 422, nothing charged', async (t) => {
  const { client, app, accountId } = await sdk(t);
  const before = await app.svc.wallet.balance(accountId);
  const e = await client.images
    .edit({ model: 'dall-e-2', prompt: 'x', image: await toFile(makePng(8, 4, [1, 1, 1]), 'wide.png') })
    .catch((err) => err);
  t.equal(e.status, 422);
  t.match(e.message, /square PNG/);
  t.equal(await app.svc.wallet.balance(accountId), before);
});
