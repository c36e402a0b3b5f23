import t from 'tap';
import { mediaApp } from './media-setup.js';
import { makeApp, activate } from '../../helpers/app.js';
import { anthropicFake } from '../../fakes/anthropic-fake.js';
import { imageType } from '../../fakes/images.js';

// database-independent: image routing and charging; the wallet and result rows are core's tests', on both.

const PNG_SIG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

t.test(
  'POST /v1/ai/image: every field; saved PNGs behind signed URLs; b64 on request; charged per image',
  async (t) => {
    const { app, oa, auth, accountId } = await mediaApp(t);
    const before = await app.svc.wallet.balance(accountId);
    const res = await app.inject({
      method: 'POST',
      url: '/v1/ai/image',
      headers: auth,
      payload: {
        prompt: 'a red fox',
        size: '64x32',
        n: 2,
        model: 'pix',
        vendor: 'oa',
        prefer: 'cheapest',
        response_format: 'b64_json',
        idempotency_key: 'img-1',
      },
    });
    t.equal(res.statusCode, 200, res.body);
    const body = res.json();
    t.equal(body.images.length, 2);
    t.equal(body.metadata.vendor, 'oa');
    t.equal(body.metadata.model, 'pix');
    t.equal(body.metadata.cost_usd, 0.08);
    t.equal(res.headers['x-svc-cost-usd'], '0.080000');
    t.equal(before - (await app.svc.wallet.balance(accountId)), 80_000, '2 images × 0.04 USD');

    const sent = oa.requests.at(-1)!;
    t.equal(sent.path, '/v1/images/generations');
    t.equal(sent.headers.authorization, 'Bearer sk-oa');
    t.same(
      sent.body,
      { model: 'pix', prompt: 'a red fox', n: 2, size: '64x32', response_format: 'b64_json' },
      'OpenAI wire format'
    );

    const hashes = new Set<string>();
    for (const img of body.images) {
      const bytes = Buffer.from(img.b64, 'base64');
      t.ok(bytes.subarray(0, 8).equals(PNG_SIG), 'b64 is a PNG');
      t.equal(bytes.readUInt32BE(16), 64, 'width as asked');
      t.equal(bytes.readUInt32BE(20), 32, 'height as asked');
      const dl = await fetch(img.url);
      t.equal(dl.status, 200);
      t.equal(dl.headers.get('content-type'), 'image/png');
      t.match(dl.headers.get('content-disposition'), /^inline; filename="image-\d\.png"/);
      t.same(Buffer.from(await dl.arrayBuffer()), bytes, 'the URL serves the same bytes');
      hashes.add(img.b64);
    }
    t.equal(hashes.size, 2, 'two different images');

    const again = await app.inject({
      method: 'POST',
      url: '/v1/ai/image',
      headers: auth,
      payload: {
        prompt: 'a red fox',
        size: '64x32',
        n: 2,
        model: 'pix',
        vendor: 'oa',
        prefer: 'cheapest',
        response_format: 'b64_json',
        idempotency_key: 'img-1',
      },
    });
    t.equal(again.headers['idempotent-replayed'], 'true');
    t.equal(before - (await app.svc.wallet.balance(accountId)), 80_000, 'a replay charges nothing');
  }
);

t.test('defaults: one image, URL only, routed to the best image model', async (t) => {
  const { app, oa, auth } = await mediaApp(t);
  const res = await app.inject({
    method: 'POST',
    url: '/v1/ai/image',
    headers: auth,
    payload: { prompt: 'a lighthouse', size: '16x16' },
  });
  t.equal(res.statusCode, 200, res.body);
  const [img] = res.json().images;
  t.same(Object.keys(img), ['url'], 'no b64 unless asked');
  t.equal(res.json().metadata.model, 'pix');
  t.equal(oa.requests.at(-1)!.body.n, 1);
  const bytes = Buffer.from(await (await fetch(img.url)).arrayBuffer());
  t.equal(imageType(bytes), 'image/png');
});

t.test('a vendor 500 fails over to the next image vendor; the failed one is not charged', async (t) => {
  const { app, oa, oa2, auth, accountId } = await mediaApp(t);
  oa.next({ status: 500 });
  const before = await app.svc.wallet.balance(accountId);
  const res = await app.inject({
    method: 'POST',
    url: '/v1/ai/image',
    headers: auth,
    payload: { prompt: 'a boat', size: '16x16' },
  });
  t.equal(res.statusCode, 200, res.body);
  const m = res.json().metadata;
  t.equal(m.vendor, 'oa2');
  t.equal(m.model, 'pix2');
  t.same(
    m.attempts.map((a: any) => [a.vendor, a.model, a.status]),
    [
      ['oa', 'pix', 'unavailable'],
      ['oa2', 'pix2', 'ok'],
    ]
  );
  t.equal(oa2.requests.at(-1)!.body.model, 'pix2');
  t.equal(before - (await app.svc.wallet.balance(accountId)), 50_000, 'only the image that was made');
});

t.test('bad input is refused before any vendor call and charges nothing', async (t) => {
  const { app, oa, oa2, auth, accountId } = await mediaApp(t);
  const before = await app.svc.wallet.balance(accountId);
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ prompt: '' }, 'prompt'],
    [{}, 'prompt'],
    [{ prompt: 'x', n: 11 }, 'n'],
    [{ prompt: 'x', n: 0 }, 'n'],
    [{ prompt: 'x', size: 'huge' }, 'size'],
    [{ prompt: 'x', response_format: 'png' }, 'response_format'],
    [{ prompt: 'x', colour: 'red' }, 'colour'],
  ];
  for (const [payload, param] of cases) {
    const res = await app.inject({ method: 'POST', url: '/v1/ai/image', headers: auth, payload });
    t.equal(res.statusCode, 400, JSON.stringify(payload));
    t.equal(res.json().error.code, 'validation_failed');
    t.equal(res.json().error.param, param);
  }
  const chat = await app.inject({
    method: 'POST',
    url: '/v1/ai/image',
    headers: auth,
    payload: { prompt: 'x', model: 'seer' },
  });
  t.equal(chat.statusCode, 503, 'a model that cannot make images');
  t.equal(chat.json().error.code, 'no_vendor_available');
  t.equal(oa.requests.length + oa2.requests.length, 0, 'no vendor was called');
  t.equal(await app.svc.wallet.balance(accountId), before);
});

t.test('503 no_vendor_available when no configured vendor makes images', async (t) => {
  const an = await anthropicFake({ key: 'k' }).start();
  t.teardown(() => an.close());
  const { app } = await makeApp(t, {
    vendors: [{ id: 'an', use: 'anthropic', config: { api_key: 'k', base_url: an.url } }],
  });
  const a = await activate(app);
  const res = await app.inject({ method: 'POST', url: '/v1/ai/image', headers: a.auth, payload: { prompt: 'a cat' } });
  t.equal(res.statusCode, 503);
  t.equal(res.json().error.code, 'no_vendor_available');
  t.match(res.json().error.message, /vendors:|POST \/v1\/byok/);
  t.equal((await app.inject({ method: 'GET', url: '/v1/account/balance', headers: a.auth })).json().balance_usd, 5);
  t.equal(an.requests.length, 0);
  const disc = (await app.inject({ method: 'GET', url: '/v1/discovery' })).json();
  const image = disc.items.find((i: { path: string }) => i.path === '/v1/ai/image');
  t.equal(image.available, false, 'discovery says image generation needs a vendor');
  t.equal(
    disc.items.find((i: { path: string }) => i.path === '/v1/ai/vision').available,
    true,
    'the anthropic instance does vision'
  );
});

t.test("a request the vendor rejects (400) is 422 with the vendor's message: no failover, no charge", async (t) => {
  const { app, oa, oa2, auth, accountId } = await mediaApp(t);
  oa.next({ status: 400 });
  const before = await app.svc.wallet.balance(accountId);
  const res = await app.inject({
    method: 'POST',
    url: '/v1/ai/image',
    headers: auth,
    payload: { prompt: 'a boat', size: '16x16' },
  });
  t.equal(res.statusCode, 422);
  t.equal(res.json().error.code, 'unprocessable');
  t.match(res.json().error.message, /oa rejected the request/);
  t.equal(oa2.requests.length, 0, 'no other vendor would do better');
  t.equal(await app.svc.wallet.balance(accountId), before);
});
