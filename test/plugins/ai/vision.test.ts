import t from 'tap';
import { imageHost, mediaApp } from './media-setup.js';
import { makePng, sha12 } from '../../fakes/images.js';
import OpenAI from 'openai';
import { openAiFake } from '../../fakes/openai-fake.js';
import { makeApp, activate } from '../../helpers/app.js';

// database-independent: vision input and routing; the wallet is core/wallet's tests', on both.

const png = makePng(3, 2, [10, 200, 30]);
const jpeg = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.from('fake jpeg body')]);

t.test(
  'POST /v1/ai/vision with base64 and a URL: the vendor gets inline images, the answer is a ChatResult',
  async (t) => {
    const { app, oa, auth, accountId } = await mediaApp(t);
    const host = await imageHost(t, jpeg, 'image/jpeg');
    const before = await app.svc.wallet.balance(accountId);
    const res = await app.inject({
      method: 'POST',
      url: '/v1/ai/vision',
      headers: auth,
      payload: {
        prompt: 'What is in these?',
        images: [{ base64: png.toString('base64'), mime: 'image/png' }, { url: `${host}/cat.jpg` }],
        model: 'seer',
        vendor: 'oa',
        max_tokens: 50,
      },
    });
    t.equal(res.statusCode, 200, res.body);
    const r = res.json();
    t.equal(
      r.content,
      `Saw 2 image(s): image/png ${sha12(png)}, image/jpeg ${sha12(jpeg)}`,
      'the vendor saw both images, byte for byte'
    );
    t.equal(r.finish_reason, 'stop');
    t.same(r.usage, { input_tokens: 12, output_tokens: 7, total_tokens: 19 });
    t.equal(r.metadata.vendor, 'oa');
    t.equal(r.metadata.model, 'seer');
    t.equal(before - (await app.svc.wallet.balance(accountId)), 12 * 1 + 7 * 2, 'charged the actual tokens');

    const sent = oa.requests.at(-1)!.body;
    t.equal(sent.max_completion_tokens, 50);
    t.same(
      sent.messages,
      [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in these?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}` } },
            { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${jpeg.toString('base64')}` } },
          ],
        },
      ],
      'OpenAI content parts with data: URLs; the vendor never sees the caller URL'
    );
  }
);

t.test('Anthropic vision: base64 image blocks before the text; a data: URL is accepted as base64', async (t) => {
  const { app, an, auth } = await mediaApp(t);
  const res = await app.inject({
    method: 'POST',
    url: '/v1/ai/vision',
    headers: auth,
    payload: {
      prompt: 'Describe',
      images: [{ base64: `data:image/png;base64,${png.toString('base64')}` }],
      vendor: 'an',
    },
  });
  t.equal(res.statusCode, 200, res.body);
  t.equal(res.json().content, `Saw 1 image(s): image/png ${sha12(png)}`);
  t.equal(res.json().metadata.model, 'eye');
  const sent = an.requests.at(-1)!.body;
  t.equal(sent.max_tokens, 100, "the model's output cap when none is given");
  t.same(sent.messages, [
    {
      role: 'user',
      content: [
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png.toString('base64') } },
        { type: 'text', text: 'Describe' },
      ],
    },
  ]);
});

t.test('routing: vision goes to vision models only; a vendor failure fails over', async (t) => {
  const { app, an, oa, auth } = await mediaApp(t);
  an.next({ status: 529 });
  const res = await app.inject({
    method: 'POST',
    url: '/v1/ai/vision',
    headers: auth,
    payload: { prompt: 'Hi', images: [{ base64: png.toString('base64') }] },
  });
  t.equal(res.statusCode, 200, res.body);
  const m = res.json().metadata;
  t.same(
    m.attempts.map((a: any) => [a.vendor, a.model, a.status]),
    [
      ['an', 'eye', 'unavailable'],
      ['oa', 'seer', 'ok'],
    ]
  );
  t.equal(oa.requests.at(-1)!.path, '/v1/chat/completions');
  const pix = await app.inject({
    method: 'POST',
    url: '/v1/ai/vision',
    headers: auth,
    payload: { prompt: 'Hi', images: [{ base64: png.toString('base64') }], model: 'pix' },
  });
  t.equal(pix.statusCode, 503, 'an image-generation model does not do vision');
});

t.test('bad images are refused before any vendor call and charge nothing', async (t) => {
  const { app, oa, an, auth, accountId } = await mediaApp(t);
  const notFound = await imageHost(t, Buffer.from('nope'), 'text/plain', 404);
  const html = await imageHost(t, Buffer.from('<html></html>'), 'image/png');
  const before = await app.svc.wallet.balance(accountId);
  const b64 = png.toString('base64');
  const cases: Array<[Record<string, unknown>, number, string, string]> = [
    [{ prompt: '', images: [{ base64: b64 }] }, 400, 'validation_failed', 'prompt'],
    [{ prompt: 'x', images: [] }, 400, 'validation_failed', 'images'],
    [{ prompt: 'x' }, 400, 'validation_failed', 'images'],
    [{ prompt: 'x', images: [{ base64: 'not base64!' }] }, 400, 'validation_failed', 'images[0].base64'],
    [
      { prompt: 'x', images: [{ base64: b64 }, { base64: b64, url: 'http://example.com/a.png' }] },
      400,
      'validation_failed',
      'images[1]',
    ],
    [{ prompt: 'x', images: [{ mime: 'image/png' }] }, 400, 'validation_failed', 'images[0]'],
    [{ prompt: 'x', images: [{ base64: b64, width: 3 }] }, 400, 'validation_failed', 'images[0].width'],
    [{ prompt: 'x', images: [{ base64: b64, mime: 'image/bmp' }] }, 400, 'validation_failed', 'images[0].mime'],
    [
      { prompt: 'x', images: [{ base64: Buffer.from('hello world').toString('base64') }] },
      422,
      'unprocessable',
      'images[0].base64',
    ],
    [
      { prompt: 'x', images: [{ base64: b64 }, { base64: b64, mime: 'image/jpeg' }] },
      422,
      'unprocessable',
      'images[1].base64',
    ],
    [{ prompt: 'x', images: [{ base64: `data:image/jpg;base64,${b64}` }] }, 422, 'unprocessable', 'images[0].base64'],
    [{ prompt: 'x', images: [{ url: 'ftp://example.com/a.png' }] }, 400, 'validation_failed', 'images[0].url'],
    [{ prompt: 'x', images: [{ url: `${notFound}/a.png` }] }, 422, 'unprocessable', 'images[0].url'],
    [{ prompt: 'x', images: [{ url: `${html}/a.png` }] }, 422, 'unprocessable', 'images[0].url'],
    [{ prompt: 'x', images: [{ url: 'http://127.0.0.1:1/a.png' }] }, 502, 'fetch_failed', 'images[0].url'],
  ];
  for (const [payload, status, code, param] of cases) {
    const res = await app.inject({ method: 'POST', url: '/v1/ai/vision', headers: auth, payload });
    t.equal(res.statusCode, status, `${JSON.stringify(payload).slice(0, 80)}: ${res.body}`);
    t.equal(res.json().error.code, code);
    t.equal(res.json().error.param, param);
  }
  t.equal(oa.requests.length + an.requests.length, 0, 'no vendor was called');
  t.equal(await app.svc.wallet.balance(accountId), before, 'nothing charged');
});

t.test('a private address is refused by the egress rules unless the operator allows it', async (t) => {
  const { app, oa, auth, accountId } = await mediaApp(t, { egress: { allow_private: false } });
  const host = await imageHost(t, png);
  const before = await app.svc.wallet.balance(accountId);
  const res = await app.inject({
    method: 'POST',
    url: '/v1/ai/vision',
    headers: auth,
    payload: { prompt: 'x', images: [{ url: `${host}/a.png` }] },
  });
  t.equal(res.statusCode, 400);
  t.equal(res.json().error.code, 'validation_failed');
  t.equal(res.json().error.param, 'images[0].url');
  t.match(res.json().error.message, /loopback|private/);
  t.equal(oa.requests.length, 0);
  t.equal(await app.svc.wallet.balance(accountId), before);
});

t.test('the vision body limit is the large one (25 MiB), and the total of the images is capped', async (t) => {
  const { app, auth } = await mediaApp(t, { limits: { large_body_bytes: 64 * 1024 } });
  const big = Buffer.concat([png, Buffer.alloc(70 * 1024)]).toString('base64');
  const res = await app.inject({
    method: 'POST',
    url: '/v1/ai/vision',
    headers: auth,
    payload: { prompt: 'x', images: [{ base64: big }] },
  });
  t.equal(res.statusCode, 413);
  t.equal(res.json().error.code, 'payload_too_large');
  const ok = await app.inject({
    method: 'POST',
    url: '/v1/ai/vision',
    headers: auth,
    payload: { prompt: 'x', images: [{ base64: Buffer.concat([png, Buffer.alloc(20 * 1024)]).toString('base64') }] },
  });
  t.equal(ok.statusCode, 200, 'over the 1 MiB default body limit of other routes is fine here');
});

t.test('a data: URL saying image/jpg is taken as image/jpeg', async (t) => {
  const { app, oa, auth } = await mediaApp(t);
  const res = await app.inject({
    method: 'POST',
    url: '/v1/ai/vision',
    headers: auth,
    payload: { prompt: 'x', images: [{ base64: `data:image/jpg;base64,${jpeg.toString('base64')}` }], model: 'seer' },
  });
  t.equal(res.statusCode, 200, res.body);
  t.equal(res.json().content, `Saw 1 image(s): image/jpeg ${sha12(jpeg)}`);
  t.equal(oa.requests.length, 1);
});

t.test(
  "openai-compatible: vision for the preset's vision models, as OpenAI content parts; none for a preset without one",
  async (t) => {
    const gq = await openAiFake({ key: 'sk-groq', name: 'fake-groq' }).start('/v1');
    const ds = await openAiFake({ key: 'sk-ds', name: 'fake-deepseek' }).start('/v1');
    for (const f of [gq, ds]) t.teardown(() => f.close());
    const { app } = await makeApp(t, {
      vendors: [
        { id: 'groq', use: 'openai-compatible', config: { preset: 'groq', base_url: gq.url, api_key: 'sk-groq' } },
        { id: 'ds', use: 'openai-compatible', config: { preset: 'deepseek', base_url: ds.url, api_key: 'sk-ds' } },
      ],
    });
    const a = await activate(app);
    const before = await app.svc.wallet.balance(a.account_id);
    const res = await app.inject({
      method: 'POST',
      url: '/v1/ai/vision',
      headers: a.auth,
      payload: {
        prompt: 'What is it?',
        images: [{ base64: png.toString('base64'), mime: 'image/png' }],
        max_tokens: 40,
      },
    });
    t.equal(res.statusCode, 200, res.body);
    t.equal(res.json().content, `Saw 1 image(s): image/png ${sha12(png)}`);
    t.match(res.json().metadata, { vendor: 'groq', model: 'meta-llama/llama-4-scout-17b-16e-instruct' });
    const sent = gq.requests.at(-1)!.body;
    t.equal(sent.model, 'meta-llama/llama-4-scout-17b-16e-instruct');
    t.equal(sent.max_tokens, 40, 'openai-compatible servers get max_tokens');
    t.same(sent.messages[0].content[1], {
      type: 'image_url',
      image_url: { url: `data:image/png;base64,${png.toString('base64')}` },
    });
    // 12 input and 7 output tokens at the preset's 0.11 / 0.34 USD per million.
    t.equal(
      before - (await app.svc.wallet.balance(a.account_id)),
      Math.ceil(12 * 0.11 + 7 * 0.34),
      "charged at the preset model's price"
    );
    const pinned = await app.inject({
      method: 'POST',
      url: '/v1/ai/vision',
      headers: a.auth,
      payload: { prompt: 'x', images: [{ base64: png.toString('base64') }], vendor: 'ds' },
    });
    t.equal(pinned.statusCode, 503, 'deepseek has no vision model');
    t.equal(pinned.json().error.code, 'no_vendor_available');
    t.equal(ds.requests.length, 0);
  }
);

t.test(
  'streamed vision on the OpenAI surface comes from the vendor; a vendor failing before the first token fails over',
  async (t) => {
    const { base, an, oa, key } = await mediaApp(t);
    const client = new OpenAI({ apiKey: key, baseURL: `${base}/v1/openai`, maxRetries: 0 });
    an.next({ status: 529 });
    const stream = await client.chat.completions.create({
      model: 'smartest',
      stream: true,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}` } },
          ],
        },
      ],
    });
    const pieces: string[] = [];
    for await (const chunk of stream) if (chunk.choices[0]?.delta?.content) pieces.push(chunk.choices[0].delta.content);
    t.equal(pieces.join(''), `Saw 1 image(s): image/png ${sha12(png)}`);
    t.ok(pieces.length > 1, 'in pieces, as the vendor streamed it');
    const sent = oa.requests.at(-1)!.body;
    t.equal(sent.stream, true);
    t.same(sent.messages[0].content[1], {
      type: 'image_url',
      image_url: { url: `data:image/png;base64,${png.toString('base64')}` },
    });
    t.equal(an.requests.length, 1, 'the Anthropic vision model was tried first');
  }
);
