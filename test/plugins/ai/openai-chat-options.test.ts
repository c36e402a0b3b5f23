import t from 'tap';
import OpenAI from 'openai';
import { sdkApp } from './sdk-setup.js';

// database-independent: request options; the service cache's rows are chat.test.ts's, on both.

// What an `openai` SDK user sends beyond messages: tool_choice, stop, JSON modes, and the
// gateway's own cache_strategy; each must work whichever vendor the gateway routes to.

const tools: OpenAI.ChatCompletionTool[] = [
  {
    type: 'function',
    function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
  },
];
const person = {
  name: 'person',
  strict: true,
  schema: {
    type: 'object',
    properties: { name: { type: 'string' }, age: { type: 'integer' } },
    required: ['name', 'age'],
    additionalProperties: false,
  },
};
const user = (content: string): OpenAI.ChatCompletionMessageParam[] => [{ role: 'user', content }];

async function text(stream: AsyncIterable<OpenAI.ChatCompletionChunk>) {
  let content = '';
  let finish: string | null = null;
  for await (const c of stream) {
    content += c.choices[0]?.delta?.content ?? '';
    finish = c.choices[0]?.finish_reason ?? finish;
  }
  return { content, finish };
}

t.test('tool_choice and stop reach OpenAI as sent and Anthropic in its own words', async (t) => {
  const { client, oa, an } = await sdkApp(t);
  const named = { type: 'function' as const, function: { name: 'weather' } };
  await client.chat.completions.create({
    model: 'alpha',
    messages: user('Weather?'),
    tools,
    tool_choice: named,
    stop: 'END',
  });
  t.match(oa.requests.at(-1)!.body, { tool_choice: named, stop: ['END'] });
  const c = await client.chat.completions.create({
    model: 'beta',
    messages: user('Weather?'),
    tools,
    tool_choice: named,
    stop: ['END', 'STOP'],
  });
  t.match(an.requests.at(-1)!.body, {
    tool_choice: { type: 'tool', name: 'weather' },
    stop_sequences: ['END', 'STOP'],
  });
  t.equal(c.choices[0].finish_reason, 'tool_calls');
  t.same(
    JSON.parse(
      (c.choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall).function.arguments
    ),
    { city: 'text' }
  );

  const none = await client.chat.completions.create({
    model: 'beta',
    messages: user('Weather?'),
    tools,
    tool_choice: 'none',
  });
  t.same(an.requests.at(-1)!.body.tool_choice, { type: 'none' });
  t.same([none.choices[0].message.content, none.choices[0].finish_reason], ['Hello from fake-anthropic.', 'stop']);
  await client.chat.completions.create({ model: 'beta', messages: user('Weather?'), tools, tool_choice: 'required' });
  t.same(an.requests.at(-1)!.body.tool_choice, { type: 'any' });

  an.next({ content: 'one two END three' });
  const cut = await client.chat.completions.create({ model: 'beta', messages: user('Count'), stop: 'END' });
  t.same([cut.choices[0].message.content, cut.choices[0].finish_reason], ['one two ', 'stop']);
  an.next({ content: 'one two END three' });
  t.same(
    await text(
      await client.chat.completions.create({ model: 'beta', messages: user('Count'), stop: 'END', stream: true })
    ),
    { content: 'one two ', finish: 'stop' }
  );
});

t.test('response_format json_schema and json_object come back as JSON from Anthropic, streamed or not', async (t) => {
  const { client, app, auth, an } = await sdkApp(t);
  const c = await client.chat.completions.create({
    model: 'beta',
    messages: user('Who?'),
    response_format: { type: 'json_schema', json_schema: person },
  });
  t.same(JSON.parse(c.choices[0].message.content!), { name: 'text', age: 1 });
  t.equal(c.choices[0].finish_reason, 'stop');
  t.notOk(c.choices[0].message.tool_calls);
  t.match(an.requests.at(-1)!.body, {
    tools: [{ name: 'person', input_schema: person.schema }],
    tool_choice: { type: 'tool', name: 'person' },
  });
  const s = await text(
    await client.chat.completions.create({
      model: 'beta',
      messages: user('Who?'),
      response_format: { type: 'json_schema', json_schema: person },
      stream: true,
    })
  );
  t.same(JSON.parse(s.content), { name: 'text', age: 1 });
  t.equal(s.finish, 'stop');

  // Routed, not pinned: the planner prefers models with `json`, and Claude answers in JSON.
  const routed = await client.chat.completions
    .create({ model: 'smartest', messages: user('Hi'), response_format: { type: 'json_object' } })
    .withResponse();
  t.equal(routed.response.headers.get('x-svc-vendor'), 'an');
  t.equal(routed.data.choices[0].message.content, '{"ok":true}');
  const native = await app.inject({
    method: 'POST',
    url: '/v1/ai/chat',
    headers: auth,
    payload: { messages: 'Who?', model: 'beta', response_format: { type: 'json_schema', json_schema: person } },
  });
  t.same(
    JSON.parse(native.json().content),
    { name: 'text', age: 1 },
    'the native body carries the same json_schema object'
  );
});

t.test(
  'bad tool_choice, stop, json_schema or cache_strategy: 400 validation_failed, nothing called or charged',
  async (t) => {
    const { client, app, auth, oa, an, accountId } = await sdkApp(t);
    const before = await app.svc.wallet.balance(accountId);
    const bad = async (params: Record<string, unknown>, param: string) => {
      const e = await client.chat.completions
        .create({ model: 'alpha', messages: user('x'), ...params } as any)
        .catch((err) => err);
      t.ok(e instanceof OpenAI.BadRequestError, JSON.stringify(params));
      t.equal(e.code, 'validation_failed');
      t.equal(e.param, param, JSON.stringify(params));
    };
    await bad({ tools, tool_choice: 'sometimes' }, 'tool_choice');
    await bad({ tools, tool_choice: { type: 'function' } }, 'tool_choice');
    await bad({ tools, tool_choice: { type: 'function', function: { name: 'nope' } } }, 'tool_choice.function.name');
    await bad({ tool_choice: 'required' }, 'tool_choice');
    await bad({ stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop');
    await bad({ stop: 7 }, 'stop');
    await bad({ response_format: { type: 'json_schema' } }, 'response_format.json_schema');
    await bad(
      { response_format: { type: 'json_schema', json_schema: { name: 'a person' } } },
      'response_format.json_schema.name'
    );
    await bad({ cache_strategy: 'forever' }, 'cache_strategy');
    const native = async (payload: Record<string, unknown>, param: string) => {
      const res = await app.inject({
        method: 'POST',
        url: '/v1/ai/chat',
        headers: auth,
        payload: { messages: 'x', ...payload },
      });
      t.same([res.statusCode, res.json().error.code, res.json().error.param], [400, 'validation_failed', param]);
    };
    await native({ tool_choice: 'auto' }, 'tool_choice');
    await native({ stop: 'x' }, 'stop');
    await native(
      { response_format: { type: 'json_schema', json_schema: { schema: { type: 'object' } } } },
      'response_format.json_schema.name'
    );
    t.equal(oa.requests.length + an.requests.length, 0);
    t.equal(await app.svc.wallet.balance(accountId), before);
  }
);

t.test('cache_strategy service on the OpenAI surface: the same cache as /v1/ai/chat, streams included', async (t) => {
  const { client, app, auth, oa } = await sdkApp(t);
  const ask = (extra: Record<string, unknown> = {}) =>
    client.chat.completions
      .create({ model: 'alpha', messages: user('cache me'), cache_strategy: 'service', ...extra } as any)
      .withResponse();
  const first = await ask();
  const calls = oa.requests.length;
  const again = await ask();
  t.equal(oa.requests.length, calls, 'the repeat is answered without the vendor');
  t.equal(again.data.choices[0].message.content, first.data.choices[0].message.content);
  t.equal(Number(again.response.headers.get('x-svc-cost-usd')), 0);
  const nativeHit = (
    await app.inject({
      method: 'POST',
      url: '/v1/ai/chat',
      headers: auth,
      payload: { messages: 'cache me', model: 'alpha', cache_strategy: 'service' },
    })
  ).json();
  t.equal(nativeHit.metadata.cached, true, 'the native endpoint finds what the OpenAI surface stored');
  await ask({ stop: ['END'] });
  t.equal(oa.requests.length, calls + 1, 'stop is part of the key');
  await client.chat.completions.create({ model: 'alpha', messages: user('cache me') });
  await client.chat.completions.create({ model: 'alpha', messages: user('cache me') });
  t.equal(oa.requests.length, calls + 3, 'the default (vendor) does not use the service cache');

  const stream = () =>
    client.chat.completions.create({
      model: 'alpha',
      messages: user('stream me'),
      stream: true,
      cache_strategy: 'service',
    } as any) as unknown as Promise<AsyncIterable<OpenAI.ChatCompletionChunk>>;
  const live = await text(await stream());
  const streamed = oa.requests.length;
  const replay = await text(await stream());
  t.equal(oa.requests.length, streamed, 'a finished stream is replayed from the cache');
  t.same(replay, live);
  t.same(live, { content: 'Hello from fake-openai.', finish: 'stop' });
});
