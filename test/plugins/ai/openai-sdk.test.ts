import t from 'tap';
import OpenAI from 'openai';
import { sdkApp as sdk } from './sdk-setup.js';

// database-independent: the OpenAI SDK's view of the wire; the wallet is core/wallet's tests', on both.

t.test('the official openai SDK: chat, streaming with for await, tools, embeddings, models', async (t) => {
  const { client, app, accountId, oa } = await sdk(t);
  const before = await app.svc.wallet.balance(accountId);
  const c = await client.chat.completions.create({
    model: 'alpha',
    messages: [
      { role: 'system', content: 'Be brief' },
      { role: 'user', content: 'Hi' },
    ],
    max_tokens: 30,
  });
  t.equal(c.object, 'chat.completion');
  t.match(c.id, /^chatcmpl-/);
  t.equal(c.model, 'alpha');
  t.equal(c.choices[0].message.content, 'Hello from fake-openai.');
  t.equal(c.choices[0].finish_reason, 'stop');
  t.same(c.usage, { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 });
  t.equal(before - (await app.svc.wallet.balance(accountId)), 18, 'the same wallet as /v1/ai');
  const raw = await client.chat.completions
    .create({ model: 'alpha', messages: [{ role: 'user', content: 'Hi' }] })
    .withResponse();
  t.equal(raw.response.headers.get('x-svc-vendor'), 'oa');
  t.equal(raw.response.headers.get('x-svc-cost-usd'), '0.000018');

  const stream = await client.chat.completions.create({
    model: 'beta',
    messages: [{ role: 'user', content: 'Hi' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  let finish: string | null = null;
  let usage: OpenAI.CompletionUsage | undefined | null;
  for await (const chunk of stream) {
    t.equal(chunk.object, 'chat.completion.chunk');
    if (chunk.choices[0]?.delta?.content) text += chunk.choices[0].delta.content;
    if (chunk.choices[0]?.finish_reason) finish = chunk.choices[0].finish_reason;
    if (chunk.usage) usage = chunk.usage;
  }
  t.equal(text, 'Hello from fake-anthropic.');
  t.equal(finish, 'stop');
  t.same(usage, { prompt_tokens: 14, completion_tokens: 3, total_tokens: 17 });

  const tools: OpenAI.ChatCompletionTool[] = [
    {
      type: 'function',
      function: {
        name: 'weather',
        description: 'Weather in a city',
        parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
    },
  ];
  const tc = await client.chat.completions.create({
    model: 'alpha',
    messages: [{ role: 'user', content: 'Weather in Paris?' }],
    tools,
  });
  t.equal(tc.choices[0].finish_reason, 'tool_calls');
  const call = tc.choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
  t.same(
    { id: call.id, type: call.type, name: call.function.name, args: JSON.parse(call.function.arguments) },
    { id: 'call_1', type: 'function', name: 'weather', args: { city: 'Paris' } }
  );
  const answer = await client.chat.completions.create({
    model: 'alpha',
    tools,
    messages: [
      { role: 'user', content: 'Weather in Paris?' },
      tc.choices[0].message,
      { role: 'tool', tool_call_id: call.id, content: 'sunny' },
    ],
  });
  t.equal(answer.choices[0].message.content, 'Hello from fake-openai.');
  t.same(oa.requests.at(-1)!.body.messages.at(-1), { role: 'tool', content: 'sunny', tool_call_id: 'call_1' });

  // Streamed tool calls arrive as deltas the SDK's stream helper reassembles.
  const runner = client.chat.completions.stream({
    model: 'alpha',
    messages: [{ role: 'user', content: 'Weather?' }],
    tools,
  });
  const final = await runner.finalChatCompletion();
  const streamed = final.choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
  t.equal(streamed.function.name, 'weather');
  t.same(JSON.parse(streamed.function.arguments), { city: 'Paris' });

  const emb = await client.embeddings.create({ model: 'emb', input: ['one two', 'three'], dimensions: 5 });
  t.equal(emb.data.length, 2);
  t.equal(emb.data[0].embedding.length, 5);
  t.ok(emb.data[0].embedding.every((x) => typeof x === 'number' && x >= -1 && x <= 1));
  t.same(emb.usage, { prompt_tokens: 3, total_tokens: 3 });
  const floats = await client.embeddings.create({
    model: 'emb',
    input: 'three',
    dimensions: 5,
    encoding_format: 'float',
  });
  t.same(
    floats.data[0].embedding.map((x) => Math.round(x * 1e4)),
    emb.data[1].embedding.map((x) => Math.round(x * 1e4))
  );

  const models = [];
  for await (const m of client.models.list()) models.push(m.id);
  t.ok(models.includes('alpha') && models.includes('beta') && models.includes('emb'), models.join(','));
});

t.test('errors in OpenAI shape: the SDK raises its typed errors', async (t) => {
  const { client, base, oa } = await sdk(t, { wallet: { trial_credit_usd: 0.00001 } });
  const bad = new OpenAI({ apiKey: 'sk_live_nope', baseURL: `${base}/v1/openai`, maxRetries: 0 });
  const authErr = await bad.chat.completions
    .create({ model: 'alpha', messages: [{ role: 'user', content: 'x' }] })
    .catch((e) => e);
  t.ok(authErr instanceof OpenAI.AuthenticationError);
  t.equal(authErr.status, 401);
  t.equal(authErr.error.type, 'authentication_error');

  const poor = await client.chat.completions
    .create({ model: 'alpha', messages: [{ role: 'user', content: 'x' }], max_tokens: 1000 })
    .catch((e) => e);
  t.ok(poor instanceof OpenAI.APIError);
  t.equal(poor.status, 402);
  t.equal(poor.code, 'insufficient_balance');
  t.match(poor.message, /Top up/);

  const invalid = await client.chat.completions
    .create({ model: 'alpha', messages: [{ role: 'wizard' as any, content: 'x' }] })
    .catch((e) => e);
  t.ok(invalid instanceof OpenAI.BadRequestError);
  t.equal(invalid.error.type, 'invalid_request_error');
  t.match(invalid.param, /messages/);

  const missing = await client.chat.completions
    .create({ model: 'gpt-9', messages: [{ role: 'user', content: 'x' }] })
    .catch((e) => e);
  t.equal(missing.status, 503);
  t.equal(missing.code, 'no_vendor_available');
  t.equal(oa.requests.length, 0);
});

t.test('a failure after the first streamed token reaches the SDK as an error', async (t) => {
  const { client, oa } = await sdk(t);
  oa.next({ content: 'one two three', malformedAfter: 1 });
  const stream = await client.chat.completions.create({
    model: 'alpha',
    messages: [{ role: 'user', content: 'x' }],
    stream: true,
  });
  let text = '';
  const err = await (async () => {
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
  })().catch((e) => e);
  t.equal(text, 'one ');
  t.ok(err instanceof OpenAI.APIError, String(err));
  t.match(err.message, /failed after the stream began/);
});
