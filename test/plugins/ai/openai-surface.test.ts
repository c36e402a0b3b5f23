import t from 'tap';
import OpenAI from 'openai';
import { sdkApp } from './sdk-setup.js';
import { mediaApp, MEDIA_MODELS } from './media-setup.js';

// database-independent: the OpenAI surface; idempotency and the wallet are core's tests', on both.

// What an `openai` SDK user meets beyond the happy path: answers with no content, retries
// with an Idempotency-Key, models.retrieve, input shapes the gateway does not take, images.

const user = (content: string): OpenAI.ChatCompletionMessageParam[] => [{ role: 'user', content }];

t.test('a streamed answer with no content still names its role: the SDK stream helper finishes', async (t) => {
  const { client, oa } = await sdkApp(t);
  oa.next({ content: '' });
  const done = await client.chat.completions
    .stream({ model: 'alpha', messages: user('say nothing') })
    .finalChatCompletion();
  t.equal(done.choices[0].message.role, 'assistant');
  t.equal(done.choices[0].message.content ?? '', '');
  t.equal(done.choices[0].finish_reason, 'stop');
});

t.test('an Idempotency-Key header makes a retry a replay: one vendor call, one charge, streams too', async (t) => {
  const { client, oa, app, accountId } = await sdkApp(t);
  const bal = await app.svc.wallet.balance(accountId);
  const once = { headers: { 'Idempotency-Key': 'oa-chat-1' } };
  const a = await client.chat.completions.create({ model: 'alpha', messages: user('hi') }, once).withResponse();
  const spent = bal - (await app.svc.wallet.balance(accountId));
  const calls = oa.requests.length;
  const b = await client.chat.completions.create({ model: 'alpha', messages: user('hi') }, once).withResponse();
  t.equal(b.response.headers.get('idempotent-replayed'), 'true');
  t.same(b.data, a.data, 'the same completion');
  t.equal(oa.requests.length, calls);
  t.equal(bal - (await app.svc.wallet.balance(accountId)), spent, 'charged once');

  const streamed = { headers: { 'Idempotency-Key': 'oa-stream-1' } };
  const collect = async () => {
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    const s = await client.chat.completions.create(
      { model: 'alpha', messages: user('count'), stream: true, stream_options: { include_usage: true } },
      streamed
    );
    for await (const c of s) {
      text += c.choices[0]?.delta?.content ?? '';
      usage = c.usage ?? usage;
    }
    return { text, usage };
  };
  const first = await collect();
  const before = oa.requests.length;
  const again = await collect();
  t.same(again, first, 'the replay carries the same text and usage');
  t.equal(oa.requests.length, before, 'no second vendor call');

  const other = await client.chat.completions
    .create({ model: 'alpha', messages: user('something else') }, once)
    .catch((e) => e);
  t.ok(other instanceof OpenAI.ConflictError, 'the same key with another body is a 409');
  t.equal(other.error?.code, 'idempotency_key_reused');
});

t.test('models.retrieve: a routable model, and a 404 in OpenAI shape for an unknown one', async (t) => {
  const { client } = await sdkApp(t);
  const m = await client.models.retrieve('alpha');
  t.match(m, { id: 'alpha', object: 'model', owned_by: 'openai' });
  const e = await client.models.retrieve('nope').catch((x) => x);
  t.ok(e instanceof OpenAI.NotFoundError);
  t.equal(e.type, 'not_found_error');
  t.equal(e.code, 'not_found');
});

t.test('embeddings: `auto` routes; token ids are refused with a message that says so', async (t) => {
  const { client } = await sdkApp(t);
  const r = await client.embeddings.create({ model: 'auto', input: 'one two' });
  t.equal(r.model, 'emb');
  for (const input of [
    [1, 2, 3],
    [[1, 2], [3]],
  ] as any[]) {
    const e = await client.embeddings.create({ model: 'emb', input }).catch((x) => x);
    t.ok(e instanceof OpenAI.BadRequestError);
    t.match(e.message, /token ids is not supported/);
    t.equal(e.param, 'input');
  }
});

t.test('no vendor for a capability: a 503 the SDK does not retry (x-should-retry: false)', async (t) => {
  const { base, key } = await sdkApp(t, { vendors: [] });
  const res = await fetch(`${base}/v1/openai/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'alpha', messages: user('hi') }),
  });
  t.equal(res.status, 503);
  t.equal(res.headers.get('x-should-retry'), 'false');
  t.equal((await res.json()).error.code, 'no_vendor_available');
});

t.test(
  'images: stream is refused before anything is made; gpt-image-* answer b64_json by default, as OpenAI does',
  async (t) => {
    const models = [...MEDIA_MODELS, { ...MEDIA_MODELS[0], id: 'gpt-image-1', family: 'gpt-image' }];
    const env = await mediaApp(t, { plugins: { ai: { models } } }, { oaModels: ['pix', 'seer', 'gpt-image-1'] });
    const client = new OpenAI({ apiKey: env.key, baseURL: `${env.base}/v1/openai`, maxRetries: 0 });
    const bal = await env.app.svc.wallet.balance(env.accountId);
    const calls = env.oa.requests.length;
    const e = await client.images.generate({ model: 'pix', prompt: 'x', stream: true } as any).catch((x) => x);
    t.ok(e instanceof OpenAI.BadRequestError, String(e));
    t.equal(e.param, 'stream');
    t.equal(env.oa.requests.length, calls, 'no vendor call');
    t.equal(await env.app.svc.wallet.balance(env.accountId), bal, 'no charge');

    const g = await client.images.generate({ model: 'gpt-image-1', prompt: 'a hill' });
    t.ok(g.data![0].b64_json, 'b64_json without asking');
    t.notOk(g.data![0].url);
    const asked = await client.images.generate({ model: 'gpt-image-1', prompt: 'a hill', response_format: 'url' });
    t.ok(asked.data![0].url, 'a URL when asked for');
  }
);

t.test("OpenAI's other request fields reach vendors speaking OpenAI's wire as sent, and nobody else", async (t) => {
  const { client, oa, an } = await sdkApp(t);
  const tools: OpenAI.ChatCompletionTool[] = [
    {
      type: 'function',
      function: {
        name: 'weather',
        strict: true,
        parameters: {
          type: 'object',
          properties: { city: { type: 'string' } },
          required: ['city'],
          additionalProperties: false,
        },
      },
    },
  ];
  const extra = {
    reasoning_effort: 'low',
    seed: 7,
    top_p: 0.5,
    presence_penalty: 0.1,
    frequency_penalty: 0.2,
    parallel_tool_calls: false,
    user: 'u-1',
  } as const;
  await client.chat.completions.create({ model: 'alpha', messages: user('hi'), tools, ...extra });
  const sent = oa.requests.at(-1)!.body;
  t.match(sent, { ...extra, model: 'alpha' });
  t.equal(sent.tools[0].function.strict, true, 'a tool keeps strict');
  await client.chat.completions.create({ model: 'beta', messages: user('hi'), ...extra });
  const toAnthropic = an.requests.at(-1)!.body;
  for (const k of Object.keys(extra)) t.notOk(k in toAnthropic, `${k} is not sent to Anthropic`);
});
