import t from 'tap';
import pino from 'pino';
import openai from '../../vendors/openai/index.js';
import anthropic from '../../vendors/anthropic/index.js';
import openaiCompatible from '../../vendors/openai-compatible/index.js';
import { VendorFailure } from '../../core/router/failure.js';
import type { VendorInstance } from '../../core/define.js';
import type { ChatInput, ChatStreamEvent } from '../../core/capabilities/ai/chat.js';
import { openAiFake } from '../fakes/openai-fake.js';
import { anthropicFake } from '../fakes/anthropic-fake.js';
import { streamed } from './chat-setup.js';

const ctx = (id: string) => ({
  instanceId: id,
  fetch: globalThis.fetch,
  publicUrl: 'http://127.0.0.1',
  dataDir: '/tmp',
  log: pino({ level: 'silent' }),
});
const plan = { model: 'm-1', price_in: 1_000_000, price_out: 2_000_000, fee: 0 };
const input = (_id: string, extra: Partial<ChatInput> = {}): ChatInput => ({
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Hi' },
  ],
  estimate: { input_tokens: 100, output_tokens: 50 },
  max_tokens: 50,
  ...extra,
});
const signal = () => ({ signal: new AbortController().signal, deadline: Date.now() + 10_000, plan });

async function collect(it: AsyncIterable<ChatStreamEvent>) {
  const out: ChatStreamEvent[] = [];
  for await (const e of it) out.push(e);
  return out;
}

async function failure(p: Promise<unknown>): Promise<VendorFailure> {
  try {
    const v = await p;
    if (v && typeof (v as any)[Symbol.asyncIterator] === 'function') await collect(v as AsyncIterable<ChatStreamEvent>);
  } catch (e) {
    if (e instanceof VendorFailure) return e;
    throw e;
  }
  throw new Error('expected a VendorFailure');
}

t.test('openai adapter: chat, tools, json, stream with usage, embeddings, health', async (t) => {
  const fake = await openAiFake({ key: 'sk-test' }).start('/v1');
  t.teardown(() => fake.close());
  const inst = (await openai.create({ api_key: 'sk-test', base_url: fake.url } as any, ctx('oa'))) as VendorInstance;
  const chat = inst.capabilities['ai.chat'];
  const out = await chat.invoke(input('oa', { temperature: 0.2 }), signal());
  t.same(out, {
    content: 'Hello from fake-openai.',
    finish_reason: 'stop',
    usage: { input_tokens: 12, output_tokens: 3 },
    model: 'm-1',
  });
  const sent = fake.requests.at(-1)!;
  t.equal(sent.headers.authorization, 'Bearer sk-test');
  t.same(sent.body, {
    model: 'm-1',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
    ],
    temperature: 0.2,
    max_completion_tokens: 50,
  });
  t.equal(chat.price(input('oa'), undefined, plan), 100 + 100, 'estimate: 100 in at 1 USD/M + 50 out at 2 USD/M');
  t.equal(chat.price(input('oa'), out, plan), 12 + 6);

  const tools = [{ type: 'function' as const, function: { name: 'weather', parameters: { type: 'object' } } }];
  const withTool = await chat.invoke(input('oa', { tools, response_format: { type: 'json_object' } }), signal());
  t.equal(withTool.finish_reason, 'tool_calls');
  t.same(withTool.tool_calls, [{ id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' }]);
  t.same(fake.requests.at(-1)!.body.response_format, { type: 'json_object' });

  // tool_choice, stop and json_schema go as OpenAI defines them.
  const person = {
    name: 'person',
    schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    strict: true,
  };
  const chosen = await chat.invoke(
    input('oa', {
      tools,
      tool_choice: { type: 'function', function: { name: 'weather' } },
      stop: ['END'],
      response_format: { type: 'json_schema', json_schema: person },
    }),
    signal()
  );
  t.match(fake.requests.at(-1)!.body, {
    tool_choice: { type: 'function', function: { name: 'weather' } },
    stop: ['END'],
    response_format: { type: 'json_schema', json_schema: person },
  });
  t.equal(chosen.tool_calls![0].name, 'weather');
  const json = await chat.invoke(
    input('oa', { response_format: { type: 'json_schema', json_schema: person } }),
    signal()
  );
  t.same(JSON.parse(json.content!), { name: 'text' });
  await chat.invoke(input('oa', { tools, tool_choice: 'none' }), signal());
  t.equal(fake.requests.at(-1)!.body.tool_choice, 'none');
  fake.next({ content: 'one two END three' });
  t.equal((await chat.invoke(input('oa', { stop: ['END'] }), signal())).content, 'one two ');
  await chat.invoke(input('oa', { tool_choice: 'auto' }), signal());
  t.notOk('tool_choice' in fake.requests.at(-1)!.body, 'no tool_choice without tools');

  const events = await collect(await inst.capabilities['ai.chat.stream'].invoke(input('oa'), signal()));
  t.equal(events.map((e) => e.delta ?? '').join(''), 'Hello from fake-openai.');
  t.same(fake.requests.at(-1)!.body.stream_options, { include_usage: true });
  t.same(events.at(-1)!.usage, { input_tokens: 12, output_tokens: 3 });
  t.ok(events.some((e) => e.finish_reason === 'stop'));

  const toolEvents = await collect(await inst.capabilities['ai.chat.stream'].invoke(input('oa', { tools }), signal()));
  const args = toolEvents
    .flatMap((e) => e.tool_calls ?? [])
    .map((c) => c.arguments ?? '')
    .join('');
  t.equal(args, '{"city":"Paris"}');
  t.equal(toolEvents.flatMap((e) => e.tool_calls ?? [])[0].name, 'weather');

  const emb = await inst.capabilities['ai.embed'].invoke(
    { input: ['a b', 'c'], dimensions: 4, estimate: { input_tokens: 4, output_tokens: 0 } },
    signal()
  );
  t.equal(emb.embeddings.length, 2);
  t.equal(emb.embeddings[0].length, 4);
  t.same(emb.usage, { input_tokens: 3, output_tokens: 0 });

  t.same(await inst.health!({ signal: new AbortController().signal }), { ok: true });
  const bad = await inst.health!({ signal: new AbortController().signal, credentials: { api_key: 'sk-wrong' } });
  t.equal(bad.ok, false);
  t.match(bad.error, /401/);
});

t.test('openai adapter maps failures to the router kinds', async (t) => {
  const fake = await openAiFake().start('/v1');
  t.teardown(() => fake.close());
  const inst = (await openai.create({ api_key: 'k', base_url: fake.url } as any, ctx('oa'))) as VendorInstance;
  const chat = inst.capabilities['ai.chat'];
  const stream = inst.capabilities['ai.chat.stream'];

  fake.next({ status: 429, retryAfter: '7' });
  const f = await failure(chat.invoke(input('oa'), signal()));
  t.equal(f.kind, 'rate_limited');
  t.equal(f.retryAfterMs, 7000);
  t.match(f.message, /Rate limit reached/);
  fake.next({ status: 500 });
  t.equal((await failure(chat.invoke(input('oa'), signal()))).kind, 'unavailable');
  fake.next({ status: 401 });
  t.equal((await failure(chat.invoke(input('oa'), signal()))).kind, 'auth');
  fake.next({ status: 403 });
  t.equal((await failure(chat.invoke(input('oa'), signal()))).kind, 'auth');
  fake.next({ status: 400 });
  t.equal((await failure(chat.invoke(input('oa'), signal()))).kind, 'client_error');
  fake.next({ malformedAfter: 1 });
  t.equal((await failure(stream.invoke(input('oa'), signal()))).kind, 'unavailable');
  fake.next({ cutAfter: 1 });
  const cut = await failure(stream.invoke(input('oa'), signal()));
  t.match(cut.message, /without \[DONE\]/);

  fake.next({ stall: true });
  const ctrl = new AbortController();
  setTimeout(() => ctrl.abort(new Error('deadline')), 100);
  await t.rejects(chat.invoke(input('oa'), { signal: ctrl.signal, deadline: Date.now() + 100, plan }), /deadline/);

  const gone = await openAiFake().start();
  await gone.close(); // a port nobody listens on any more: connection refused
  const down = (await openai.create({ api_key: 'k', base_url: gone.url } as any, ctx('down'))) as VendorInstance;
  t.equal((await failure(down.capabilities['ai.chat'].invoke(input('down'), signal()))).kind, 'not_sent');
});

t.test('openai-compatible presets fill in the base URL; base_url overrides', async (t) => {
  const fake = await openAiFake({ name: 'fake-deepseek' }).start('/v1');
  t.teardown(() => fake.close());
  const inst = (await openaiCompatible.create(
    { preset: 'deepseek', base_url: fake.url, api_key: 'k' } as any,
    ctx('deepseek')
  )) as VendorInstance;
  const out = await inst.capabilities['ai.chat'].invoke(input('deepseek'), signal());
  t.equal(out.content, 'Hello from fake-deepseek.');
  t.equal(fake.requests.at(-1)!.body.max_tokens, 50, 'compatible servers get max_tokens');
  const schema = { name: 'n', schema: { type: 'object', properties: { n: { type: 'integer' } } } };
  const json = await inst.capabilities['ai.chat'].invoke(
    input('deepseek', {
      response_format: { type: 'json_schema', json_schema: schema },
      stop: ['x'],
      tools: [{ type: 'function', function: { name: 'f' } }],
      tool_choice: 'required',
    }),
    signal()
  );
  t.match(fake.requests.at(-1)!.body, {
    response_format: { type: 'json_schema', json_schema: schema },
    stop: ['x'],
    tool_choice: 'required',
  });
  t.equal(json.tool_calls![0].name, 'f');
  t.throws(() => openaiCompatible.create({ api_key: '' } as any, ctx('x')), /preset or a base_url/);
});

t.test('anthropic adapter: native Messages wire, tools, stream, failures', async (t) => {
  const fake = await anthropicFake({ key: 'ak' }).start();
  t.teardown(() => fake.close());
  const inst = (await anthropic.create(
    { api_key: 'ak', base_url: fake.url, default_max_tokens: 1024 } as any,
    ctx('an')
  )) as VendorInstance;
  const chat = inst.capabilities['ai.chat'];
  const out = await chat.invoke(input('an'), signal());
  t.same(out, {
    content: 'Hello from fake-anthropic.',
    finish_reason: 'stop',
    usage: { input_tokens: 14, output_tokens: 3 },
    model: 'm-1',
  });
  const sent = fake.requests.at(-1)!;
  t.equal(sent.headers['x-api-key'], 'ak');
  t.equal(sent.headers['anthropic-version'], '2023-06-01');
  t.equal(sent.body.system, 'Be brief.');
  t.same(sent.body.messages, [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }]);
  t.equal(sent.body.max_tokens, 50);

  const tools = [{ type: 'function' as const, function: { name: 'weather', parameters: { type: 'object' } } }];
  const tc = await chat.invoke(input('an', { tools }), signal());
  t.equal(tc.finish_reason, 'tool_calls');
  t.same(tc.tool_calls, [{ id: 'toolu_1', name: 'weather', arguments: '{"city":"Paris"}' }]);
  // The tool result goes back as a user tool_result block after the assistant's tool_use.
  await chat.invoke(
    input('an', {
      tools,
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: null, tool_calls: tc.tool_calls },
        { role: 'tool', content: 'sunny', tool_call_id: 'toolu_1' },
      ],
    }),
    signal()
  );
  t.same(fake.requests.at(-1)!.body.messages.at(-1), {
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' }],
  });

  const events = await collect(await inst.capabilities['ai.chat.stream'].invoke(input('an'), signal()));
  t.equal(events.map((e) => e.delta ?? '').join(''), 'Hello from fake-anthropic.');
  t.same(events.at(-1), { finish_reason: 'stop', usage: { input_tokens: 14, output_tokens: 3 }, model: 'm-1' });

  const toolStream = await collect(await inst.capabilities['ai.chat.stream'].invoke(input('an', { tools }), signal()));
  t.same(toolStream.flatMap((e) => e.tool_calls ?? [])[0], { index: 0, id: 'toolu_1', name: 'weather', arguments: '' });
  t.same(
    streamed(toolStream).calls,
    [{ id: 'toolu_1', name: 'weather', arguments: '{"city":"Paris"}' }],
    'input_json_delta fragments, joined'
  );
  t.equal(toolStream.at(-1)!.finish_reason, 'tool_calls');

  // cache_strategy vendor: the system prompt carries a cache_control hint, and cached input
  // tokens are billed as their full-price equivalent (write 1.25x, read 0.1x).
  fake.next({ usage: { input: 14, output: 3, cacheWrite: 8, cacheRead: 100 } });
  const cachedOut = await chat.invoke(input('an', { cache_strategy: 'vendor' }), signal());
  t.same(fake.requests.at(-1)!.body.system, [
    { type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } },
  ]);
  t.same(cachedOut.usage, { input_tokens: 14 + 10 + 10, output_tokens: 3 });

  fake.next({ status: 529 });
  t.equal((await failure(chat.invoke(input('an'), signal()))).kind, 'unavailable');
  fake.next({ status: 429, retryAfter: '3' });
  const rl = await failure(chat.invoke(input('an'), signal()));
  t.equal(rl.kind, 'rate_limited');
  t.equal(rl.retryAfterMs, 3000);
  fake.next({ malformedAfter: 1 });
  t.match((await failure(inst.capabilities['ai.chat.stream'].invoke(input('an'), signal()))).message, /Overloaded/);
  fake.next({ cutAfter: 1 });
  t.match(
    (await failure(inst.capabilities['ai.chat.stream'].invoke(input('an'), signal()))).message,
    /without message_stop/
  );
  t.same(await inst.health!({ signal: new AbortController().signal }), { ok: true });
  t.equal((await inst.health!({ signal: new AbortController().signal, credentials: { api_key: 'nope' } })).ok, false);
});
