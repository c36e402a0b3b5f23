import t from 'tap';
import OpenAI from 'openai';
import { imageHost, mediaApp } from './media-setup.js';
import { imageType, makePng, sha12 } from '../../fakes/images.js';

// database-independent: the OpenAI images surface; the wallet and results are core's tests', on both.

async function sdk(t: any) {
  const env = await mediaApp(t);
  return { ...env, client: new OpenAI({ apiKey: env.key, baseURL: `${env.base}/v1/openai`, maxRetries: 0 }) };
}

t.test('the official openai SDK: images.generate as URLs and as b64_json, through the same wallet', async (t) => {
  const { client, app, accountId, oa } = await sdk(t);
  const before = await app.svc.wallet.balance(accountId);
  const r = await client.images.generate({ model: 'pix', prompt: 'a green hill', n: 2, size: '256x256' as any });
  t.equal(r.data!.length, 2);
  t.type(r.created, 'number');
  for (const d of r.data!) {
    t.notOk(d.b64_json, 'URL format by default');
    const bytes = Buffer.from(await (await fetch(d.url!)).arrayBuffer());
    t.equal(imageType(bytes), 'image/png');
    t.equal(bytes.readUInt32BE(16), 256);
  }
  t.equal(before - (await app.svc.wallet.balance(accountId)), 80_000, '2 × 0.04 USD, as on /v1/ai/image');

  const b = await client.images
    .generate({
      model: 'auto',
      prompt: 'a blue lake',
      size: '32x32' as any,
      response_format: 'b64_json',
      quality: 'standard',
      style: 'vivid',
    })
    .withResponse();
  t.equal(b.response.headers.get('x-svc-vendor'), 'oa');
  t.equal(b.response.headers.get('x-svc-cost-usd'), '0.040000');
  const [img] = b.data.data!;
  t.notOk(img.url);
  t.equal(imageType(Buffer.from(img.b64_json!, 'base64')), 'image/png');
  t.equal(oa.requests.at(-1)!.body.model, 'pix', '`auto` routes to the best image model');
});

t.test('SDK errors: bad n is a 400 BadRequestError in OpenAI shape; no image vendor for a model is 503', async (t) => {
  const { client, app, accountId } = await sdk(t);
  const before = await app.svc.wallet.balance(accountId);
  const bad = await client.images.generate({ model: 'pix', prompt: 'x', n: 11 }).catch((e) => e);
  t.ok(bad instanceof OpenAI.BadRequestError);
  t.equal(bad.status, 400);
  t.equal(bad.code, 'validation_failed');
  t.equal(bad.param, 'n');
  const none = await client.images.generate({ model: 'seer', prompt: 'x' }).catch((e) => e);
  t.equal(none.status, 503);
  t.equal(none.code, 'no_vendor_available');
  t.equal(await app.svc.wallet.balance(accountId), before);
});

t.test(
  'the official openai SDK: chat.completions with image_url parts goes to a vision model, streamed or not',
  async (t) => {
    const { client, oa, an, app, accountId } = await sdk(t);
    const png = makePng(4, 4, [9, 9, 9]);
    const host = await imageHost(t, png);
    const before = await app.svc.wallet.balance(accountId);
    const c = await client.chat.completions.create({
      model: 'seer',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}`, detail: 'low' } },
            { type: 'image_url', image_url: { url: `${host}/b.png` } },
          ],
        },
      ],
    });
    t.equal(c.choices[0].message.content, `Saw 2 image(s): image/png ${sha12(png)}, image/png ${sha12(png)}`);
    t.equal(c.model, 'seer');
    const parts = oa.requests.at(-1)!.body.messages[0].content;
    t.same(
      parts.map((p: any) => p.type),
      ['text', 'image_url', 'image_url']
    );
    t.equal(
      parts[2].image_url.url,
      `data:image/png;base64,${png.toString('base64')}`,
      'the URL was fetched by the gateway and sent inline'
    );
    t.equal(before - (await app.svc.wallet.balance(accountId)), 12 + 7 * 2);

    const stream = await client.chat.completions.create({
      model: 'smartest',
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        {
          role: 'user',
          content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}` } }],
        },
      ],
    });
    let text = '';
    let usage: any;
    let pieces = 0;
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta?.content) pieces++;
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    t.equal(
      text,
      `Saw 1 image(s): image/png ${sha12(png)}`,
      '`smartest` routes to the best vision model (eye, on Anthropic)'
    );
    t.equal(an.requests.at(-1)!.body.messages[0].content[0].type, 'image');
    t.equal(an.requests.at(-1)!.body.stream, true, 'streamed from the vendor');
    t.ok(pieces > 1, `the answer arrived as the vendor sent it, in ${pieces} pieces`);
    t.ok(usage.total_tokens > 0);

    const bad = await client.chat.completions
      .create({
        model: 'seer',
        messages: [
          { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,aGVsbG8=' } }] },
        ],
      })
      .catch((e) => e);
    t.equal(bad.status, 422);
    t.equal(bad.param, 'messages[0].content[0].image_url.url');
    const sys = await client.chat.completions
      .create({
        model: 'seer',
        messages: [
          { role: 'system', content: [{ type: 'image_url', image_url: { url: `${host}/b.png` } }] as any },
          { role: 'user', content: 'Hi' },
        ],
      })
      .catch((e) => e);
    t.equal(sys.status, 400);
    t.equal(sys.param, 'messages[0].content[0]');
    t.equal(
      await app.svc.wallet.balance(accountId),
      before - (12 + 7 * 2) - Number(usage.prompt_tokens * 2 + usage.completion_tokens * 4),
      'refused calls charge nothing'
    );
  }
);
