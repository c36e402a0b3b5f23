import t from 'tap';
import pino from 'pino';
import openai from '../../vendors/openai/index.js';
import anthropic from '../../vendors/anthropic/index.js';
import gemini from '../../vendors/gemini/index.js';
import { VendorFailure } from '../../core/router/failure.js';
import type { VendorInstance } from '../../core/define.js';
import type { CandidatePlan, ChatInput } from '../../core/capabilities/ai/chat.js';
import type { ImageInput } from '../../core/capabilities/ai/image.js';
import { openAiFake } from '../fakes/openai-fake.js';
import { anthropicFake } from '../fakes/anthropic-fake.js';
import { geminiFake } from '../fakes/gemini-fake.js';
import type { FakeServer } from '../fakes/script.js';
import { imageType, makePng, sha12 } from '../fakes/images.js';

const ctx = (id: string) => ({
  instanceId: id,
  fetch: globalThis.fetch,
  publicUrl: 'http://127.0.0.1',
  dataDir: '/tmp',
  log: pino({ level: 'silent' }),
});
const opts = (plan: CandidatePlan) => ({ signal: new AbortController().signal, deadline: Date.now() + 10_000, plan });
const png = makePng(2, 2, [1, 2, 3]);
const vision = (data = png.toString('base64')): ChatInput => ({
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'What is it?', images: [{ mime: 'image/png', data }] },
  ],
  estimate: { input_tokens: 2000, output_tokens: 50 },
  max_tokens: 50,
});
const visionPlan = (model: string): CandidatePlan => ({ model, price_in: 1_000_000, price_out: 2_000_000, fee: 0 });
const image = (n: number, size?: string): ImageInput => ({ prompt: 'a cat', n, ...(size ? { size } : {}) });
const imagePlan = (model: string): CandidatePlan => ({ model, price_in: 0, price_out: 0, fee: 0, price_image: 40_000 });

/** An adapter instance on a started fake, and what its `ai.vision` makes of the test PNG. */
async function seeing(
  t: any,
  fake: FakeServer,
  make: (url: string) => Promise<VendorInstance>,
  _id: string,
  model: string
) {
  t.teardown(() => fake.close());
  const inst = await make(fake.url);
  const out = await inst.capabilities['ai.vision'].invoke(vision(), opts(visionPlan(model)));
  t.equal(out.content, `Saw 1 image(s): image/png ${sha12(png)}`, 'the vendor saw the image, byte for byte');
  return inst;
}

async function failure(p: Promise<unknown>): Promise<VendorFailure> {
  const e = await p.then(
    () => undefined,
    (err) => err
  );
  if (!(e instanceof VendorFailure)) throw new Error(`expected a VendorFailure, got ${e}`);
  return e;
}

t.test('openai ai.image: gpt-image and DALL·E requests, PNGs back, priced per image', async (t) => {
  const fake = await openAiFake({ key: 'sk' }).start('/v1');
  t.teardown(() => fake.close());
  const inst = (await openai.create({ api_key: 'sk', base_url: fake.url } as any, ctx('oa'))) as VendorInstance;
  const cap = inst.capabilities['ai.image'];
  const input = image(2, '1024x1536');
  const plan = imagePlan('gpt-image-1');
  t.equal(cap.price(input, undefined, plan), 80_000, 'the estimate is n × price_image');
  const out = await cap.invoke(input, opts(plan));
  t.same(
    fake.requests.at(-1)!.body,
    { model: 'gpt-image-1', prompt: 'a cat', n: 2, size: '1024x1536', quality: 'medium' },
    'no response_format for gpt-image'
  );
  t.equal(out.images.length, 2);
  t.equal(out.model, 'gpt-image-1');
  for (const i of out.images) {
    t.equal(i.mime, 'image/png');
    t.equal(imageType(i.data), 'image/png');
    t.equal(i.data.readUInt32BE(16), 1024);
    t.equal(i.data.readUInt32BE(20), 1536);
  }
  t.equal(cap.price(input, { ...out, images: out.images.slice(0, 1) }, plan), 40_000, 'settled per image returned');

  const dalle = await cap.invoke(image(1, '256x256'), opts(imagePlan('dall-e-2')));
  t.equal(fake.requests.at(-1)!.body.response_format, 'b64_json', 'DALL·E is asked for base64');
  t.equal(imageType(dalle.images[0].data), 'image/png');

  const bad = await failure(cap.invoke(image(2), opts(imagePlan('dall-e-3'))));
  t.equal(bad.kind, 'client_error', "the vendor's 400 is not retried elsewhere");
  t.match(bad.message, /n=1/);
  fake.next({ status: 503 });
  t.equal((await failure(cap.invoke(image(1), opts(imagePlan('gpt-image-1'))))).kind, 'unavailable');
});

t.test('openai ai.vision: image_url data: parts the vendor decodes', async (t) => {
  const fake = await openAiFake({ key: 'sk' }).start('/v1');
  const inst = await seeing(
    t,
    fake,
    async (url) => (await openai.create({ api_key: 'sk', base_url: url } as any, ctx('oa'))) as VendorInstance,
    'oa',
    'gpt-4o'
  );
  t.same(
    fake.requests.at(-1)!.body.messages[0],
    { role: 'system', content: 'Be brief.' },
    'text-only turns stay strings'
  );
  const lie = await failure(
    inst.capabilities['ai.vision'].invoke(
      vision(Buffer.from('not an image').toString('base64')),
      opts(visionPlan('gpt-4o'))
    )
  );
  t.equal(lie.kind, 'client_error', 'the fake refuses a data: URL that is not the image it says');
});

t.test('anthropic ai.vision: base64 image blocks, checked by the fake as the Messages API does', async (t) => {
  const fake = await anthropicFake({ key: 'ak' }).start();
  const inst = await seeing(
    t,
    fake,
    async (url) =>
      (await anthropic.create(
        { api_key: 'ak', base_url: url, default_max_tokens: 100 } as any,
        ctx('an')
      )) as VendorInstance,
    'an',
    'claude-haiku-4-5'
  );
  const sent = fake.requests.at(-1)!.body;
  t.equal(sent.system, 'Be brief.');
  t.same(sent.messages, [
    {
      role: 'user',
      content: [
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png.toString('base64') } },
        { type: 'text', text: 'What is it?' },
      ],
    },
  ]);
  const jpegAsPng = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]).toString('base64');
  const bad = await failure(
    inst.capabilities['ai.vision'].invoke(vision(jpegAsPng), opts(visionPlan('claude-haiku-4-5')))
  );
  t.equal(bad.kind, 'client_error');
  t.match(bad.message, /image\/png media type, but the image appears to be a image\/jpeg image/);
});

t.test('gemini ai.vision: inlineData parts before the text', async (t) => {
  const fake = await geminiFake({ key: 'gk' }).start('/v1beta');
  await seeing(
    t,
    fake,
    async (url) => (await gemini.create({ api_key: 'gk', base_url: url } as any, ctx('gm'))) as VendorInstance,
    'gm',
    'gemini-2.5-flash'
  );
  t.same(fake.requests.at(-1)!.body.contents, [
    {
      role: 'user',
      parts: [{ inlineData: { mimeType: 'image/png', data: png.toString('base64') } }, { text: 'What is it?' }],
    },
  ]);
});
