import t from 'tap';
import { imageHost, mediaApp } from './media-setup.js';
import { imageType, makePng } from '../../fakes/images.js';

// database-independent: image edit routing and charging; the wallet is core/wallet's tests', on both.

const edit = (app: any, auth: any, payload: Record<string, unknown>) =>
  app.inject({ method: 'POST', url: '/v1/ai/image/edit', headers: auth, payload });

t.test(
  "POST /v1/ai/image/edit: ImageRefs (base64 and a fetched URL mask) sent as OpenAI's multipart edit, saved, charged per image",
  async (t) => {
    const { app, oa, auth, accountId } = await mediaApp(t, {}, { oaModels: ['pix', 'dall-e-2'] });
    const png = makePng(8, 8, [10, 20, 30]);
    const mask = makePng(8, 8, [0, 0, 0]);
    const host = await imageHost(t, mask);
    const before = await app.svc.wallet.balance(accountId);
    const res = await edit(app, auth, {
      prompt: 'make it blue',
      images: [{ base64: png.toString('base64') }],
      mask: { url: `${host}/mask.png` },
      model: 'dall-e-2',
      n: 2,
      size: '256x256',
      response_format: 'b64_json',
      idempotency_key: 'edit-1',
    });
    t.equal(res.statusCode, 200, res.body);
    const body = res.json();
    t.equal(body.images.length, 2);
    t.match(body.metadata, { vendor: 'oa', model: 'dall-e-2', cost_usd: 0.04 });
    t.equal(before - (await app.svc.wallet.balance(accountId)), 40_000, '2 × 0.02 USD');
    for (const img of body.images) {
      const bytes = Buffer.from(img.b64, 'base64');
      t.equal(imageType(bytes), 'image/png');
      t.same(Buffer.from(await (await fetch(img.url)).arrayBuffer()), bytes, 'the URL serves the same bytes');
    }
    const got = oa.uploads.received.at(-1)!;
    t.equal(got.path, '/images/edits');
    t.ok(got.images[0].bytes.equals(png));
    t.ok(got.mask!.bytes.equals(mask), 'the mask URL was fetched by the gateway and uploaded');
    t.same(got.fields, {
      prompt: 'make it blue',
      model: 'dall-e-2',
      n: '2',
      size: '256x256',
      response_format: 'b64_json',
    });

    const replay = await edit(app, auth, {
      prompt: 'make it blue',
      images: [{ base64: png.toString('base64') }],
      mask: { url: `${host}/mask.png` },
      model: 'dall-e-2',
      n: 2,
      size: '256x256',
      response_format: 'b64_json',
      idempotency_key: 'edit-1',
    });
    t.equal(replay.headers['idempotent-replayed'], 'true');
    t.equal(oa.uploads.received.length, 1, 'a replay edits nothing again');
  }
);

t.test('native edit: bad input is refused before anything is sent or charged', async (t) => {
  const { app, oa, auth, accountId } = await mediaApp(t, {}, { oaModels: ['pix', 'dall-e-2'] });
  const png = makePng(4, 4, [1, 1, 1]).toString('base64');
  const gif = Buffer.concat([Buffer.from('GIF89a'), Buffer.alloc(20)]).toString('base64');
  const before = await app.svc.wallet.balance(accountId);
  const cases: Array<[Record<string, unknown>, number, string, string]> = [
    [{ prompt: 'x', images: [] }, 400, 'validation_failed', 'images'],
    [{ prompt: 'x', images: Array.from({ length: 17 }, () => ({ base64: png })) }, 400, 'validation_failed', 'images'],
    [{ prompt: 'x', images: [{ base64: gif }] }, 422, 'unprocessable', 'images[0]'],
    [
      {
        prompt: 'x',
        images: [{ base64: png }],
        mask: { base64: Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0]).toString('base64') },
      },
      422,
      'unprocessable',
      'mask',
    ],
    [{ prompt: 'x', images: [{ base64: png }], n: 11 }, 400, 'validation_failed', 'n'],
    [{ prompt: 'x', images: [{ base64: png }], model: 'dall-e-3' }, 503, 'no_vendor_available', 'model'],
  ];
  for (const [payload, status, code, param] of cases) {
    const res = await edit(app, auth, payload);
    t.equal(res.statusCode, status, JSON.stringify(payload).slice(0, 80));
    t.equal(res.json().error.code, code);
    t.match(res.json().error.param ?? '', param);
  }
  t.equal(oa.uploads.received.length, 0);
  t.equal(await app.svc.wallet.balance(accountId), before);
});
