import t from 'tap';
import OpenAI, { toFile } from 'openai';
import { mediaApp } from './media-setup.js';
import { imageType, makePng } from '../../fakes/images.js';

// database-independent: the OpenAI variations surface; the wallet and results are core's tests', on both.

// dall-e-2 (0.02 USD an image) is the catalog's only model with `image_variation`.
async function sdk(t: any) {
  const env = await mediaApp(t, {}, { oaModels: ['pix', 'gpt-image-1', 'dall-e-2'] });
  return { ...env, client: new OpenAI({ apiKey: env.key, baseURL: `${env.base}/v1/openai`, maxRetries: 0 }) };
}

t.test(
  "images.createVariation with the official SDK: OpenAI's multipart /images/variations, saved, charged per image",
  async (t) => {
    const { client, app, accountId, oa } = await sdk(t);
    const png = makePng(16, 16, [30, 60, 90]);
    const before = await app.svc.wallet.balance(accountId);
    const r = await client.images
      .createVariation({ image: await toFile(png, 'otter.png', { type: 'image/png' }), n: 2, size: '256x256' })
      .withResponse();
    t.equal(r.data.data!.length, 2);
    for (const d of r.data.data!) {
      const bytes = Buffer.from(await (await fetch(d.url!)).arrayBuffer());
      t.equal(imageType(bytes), 'image/png');
      t.equal(bytes.readUInt32BE(16), 256);
    }
    const got = oa.uploads.received.at(-1)!;
    t.equal(got.path, '/images/variations');
    t.same(
      got.fields,
      { model: 'dall-e-2', n: '2', size: '256x256', response_format: 'b64_json' },
      'routed to the one model that makes variations'
    );
    t.ok(got.images[0].bytes.equals(png));
    t.equal(got.images[0].field, 'image');
    t.equal(r.response.headers.get('x-svc-cost-usd'), '0.040000');
    t.equal(before - (await app.svc.wallet.balance(accountId)), 40_000);

    const b64 = await client.images.createVariation({
      image: await toFile(png, 'otter.png'),
      response_format: 'b64_json',
    });
    t.equal(imageType(Buffer.from(b64.data![0].b64_json!, 'base64')), 'image/png');
    t.notOk(b64.data![0].url);
  }
);

t.test("variation refusals: before anything is sent, or the vendor's 422; nothing charged", async (t) => {
  const { client, app, accountId, oa, base, key } = await sdk(t);
  const png = makePng(4, 4, [9, 9, 9]);
  const before = await app.svc.wallet.balance(accountId);
  const e1 = await client.images
    .createVariation({ image: await toFile(Buffer.from('no picture'), 'a.png') })
    .catch((e) => e);
  t.equal(e1.status, 422);
  t.equal(e1.param, 'image');
  const e2 = await client.images
    .createVariation({ image: await toFile(png, 'a.png'), model: 'gpt-image-1' })
    .catch((e) => e);
  t.equal(e2.status, 503, 'gpt-image-1 makes no variations');
  t.equal(e2.code, 'no_vendor_available');
  const e3 = await client.images.createVariation({ image: await toFile(png, 'a.png'), n: 0 }).catch((e) => e);
  t.equal(e3.status, 400);
  t.equal(e3.param, 'n');
  const two = new FormData();
  two.append('image', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'a.png');
  two.append('image', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'b.png');
  const e4 = await fetch(`${base}/v1/openai/images/variations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: two,
  });
  t.equal(e4.status, 400, 'one image a variation');
  t.match(await e4.json(), { error: { param: 'image', code: 'validation_failed' } });
  t.equal(oa.requests.length, 0);
  const wide = await client.images
    .createVariation({ image: await toFile(makePng(8, 4, [1, 1, 1]), 'wide.png') })
    .catch((e) => e);
  t.equal(wide.status, 422, "DALL·E 2 wants a square PNG: the vendor's refusal");
  t.match(wide.message, /square PNG/);
  t.equal(await app.svc.wallet.balance(accountId), before);
});

t.test('POST /v1/ai/image/variation: an ImageRef, same routing, saving and charging', async (t) => {
  const { app, oa, auth, accountId } = await sdk(t);
  const png = makePng(8, 8, [5, 5, 5]);
  const before = await app.svc.wallet.balance(accountId);
  const res = await app.inject({
    method: 'POST',
    url: '/v1/ai/image/variation',
    headers: auth,
    payload: { image: { base64: png.toString('base64') }, size: '256x256', response_format: 'b64_json' },
  });
  t.equal(res.statusCode, 200, res.body);
  t.match(res.json().metadata, { vendor: 'oa', model: 'dall-e-2', cost_usd: 0.02 });
  t.equal(imageType(Buffer.from(res.json().images[0].b64, 'base64')), 'image/png');
  t.ok(oa.uploads.received.at(-1)!.images[0].bytes.equals(png));
  t.equal(before - (await app.svc.wallet.balance(accountId)), 20_000);
  const bad = await app.inject({
    method: 'POST',
    url: '/v1/ai/image/variation',
    headers: auth,
    payload: { image: { base64: Buffer.from('GIF89a0000000000000000').toString('base64') } },
  });
  t.equal(bad.statusCode, 422);
  t.equal(bad.json().error.param, 'image');
  const none = await app.inject({
    method: 'POST',
    url: '/v1/ai/image/variation',
    headers: auth,
    payload: { image: {} },
  });
  t.equal(none.statusCode, 400);
  t.equal(oa.uploads.received.length, 1);
});
