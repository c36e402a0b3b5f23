import t from 'tap';
import anthropic from '../../vendors/anthropic/index.js';
import { messagesStream } from '../../vendors/anthropic/wire.js';
import { anthropicFake } from '../fakes/anthropic-fake.js';
import { chatInput, collect, instance, PERSON_SCHEMA, signal, streamed } from './chat-setup.js';

const weather = {
  type: 'function' as const,
  function: {
    name: 'weather',
    description: 'Weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } } },
  },
};
const person = {
  type: 'json_schema' as const,
  json_schema: { name: 'person', description: 'The person named', schema: PERSON_SCHEMA },
};

async function setup(t: { teardown(fn: () => unknown): void }) {
  const fake = await anthropicFake({ key: 'ak' }).start();
  t.teardown(() => fake.close());
  const inst = await instance(anthropic, 'an', { api_key: 'ak', base_url: fake.url, default_max_tokens: 1024 });
  return {
    fake,
    chat: inst.capabilities['ai.chat'],
    stream: inst.capabilities['ai.chat.stream'],
    sent: () => fake.requests.at(-1)!.body,
  };
}

t.test('json_schema: one forced tool whose input is the answer, handed back as the content', async (t) => {
  const { chat, stream, sent } = await setup(t);
  const out = await chat.invoke(chatInput('an', 'claude-x', { response_format: person }), signal('claude-x'));
  t.same(sent().tools, [{ name: 'person', description: 'The person named', input_schema: PERSON_SCHEMA }]);
  t.same(sent().tool_choice, { type: 'tool', name: 'person' });
  t.same(
    JSON.parse(out.content!),
    { name: 'text', age: 1, role: 'admin', address: { city: 'text' } },
    'the tool_use input, as JSON'
  );
  t.equal(out.finish_reason, 'stop', 'answering is not a tool call');
  t.notOk(out.tool_calls);

  const events = await collect(
    await stream.invoke(chatInput('an', 'claude-x', { response_format: person }), signal('claude-x'))
  );
  t.equal(sent().stream, true);
  t.same(sent().tool_choice, { type: 'tool', name: 'person' });
  const s = streamed(events);
  t.ok(events.filter((e) => e.delta).length > 1, 'input_json_delta fragments arrive as content deltas');
  t.same(JSON.parse(s.text), { name: 'text', age: 1, role: 'admin', address: { city: 'text' } });
  t.same(s.calls, []);
  t.equal(s.finish, 'stop');
  t.same(events.at(-1)!.usage, { input_tokens: 14, output_tokens: 3 });
});

t.test('json_object: a forced tool taking any object', async (t) => {
  const { chat, stream, sent } = await setup(t);
  const out = await chat.invoke(
    chatInput('an', 'claude-x', { response_format: { type: 'json_object' } }),
    signal('claude-x')
  );
  t.match(sent().tools, [{ name: 'json_answer', input_schema: { type: 'object' } }]);
  t.equal(sent().tools.length, 1);
  t.same(sent().tool_choice, { type: 'tool', name: 'json_answer' });
  t.same(
    sent().messages,
    [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
    'no assistant prefill: newer models refuse one'
  );
  t.same({ content: out.content, finish: out.finish_reason }, { content: '{"ok":true}', finish: 'stop' });
  const s = streamed(
    await collect(
      await stream.invoke(chatInput('an', 'claude-x', { response_format: { type: 'json_object' } }), signal('claude-x'))
    )
  );
  t.same({ text: s.text, finish: s.finish }, { text: '{"ok":true}', finish: 'stop' });
  // A text response_format is no JSON mode.
  await chat.invoke(chatInput('an', 'claude-x', { response_format: { type: 'text' } }), signal('claude-x'));
  t.notOk(sent().tools);
});

t.test("a JSON mode beside the caller's tools: `any`, so the model calls a tool or answers in JSON", async (t) => {
  const { fake, chat, stream, sent } = await setup(t);
  const call = await chat.invoke(
    chatInput('an', 'claude-x', { tools: [weather], response_format: person }),
    signal('claude-x')
  );
  t.same(
    sent().tools.map((x: any) => x.name),
    ['weather', 'person']
  );
  t.same(sent().tool_choice, { type: 'any' });
  t.same(
    { content: call.content, finish: call.finish_reason, calls: call.tool_calls },
    { content: null, finish: 'tool_calls', calls: [{ id: 'toolu_1', name: 'weather', arguments: '{"city":"Paris"}' }] }
  );
  fake.next({ toolCall: { name: 'person', arguments: '{"name":"Ada"}' } });
  const answer = await chat.invoke(
    chatInput('an', 'claude-x', { tools: [weather], response_format: person }),
    signal('claude-x')
  );
  t.same(
    { content: answer.content, finish: answer.finish_reason, calls: answer.tool_calls },
    { content: '{"name":"Ada"}', finish: 'stop', calls: undefined }
  );
  fake.next({ toolCall: { name: 'person', arguments: '{"name":"Ada"}' } });
  const s = streamed(
    await collect(
      await stream.invoke(
        chatInput('an', 'claude-x', { tools: [weather], response_format: person }),
        signal('claude-x')
      )
    )
  );
  t.same({ text: s.text, calls: s.calls, finish: s.finish }, { text: '{"name":"Ada"}', calls: [], finish: 'stop' });

  // `required` asks for a tool call, so no answer tool; `none` forces the answer tool.
  await chat.invoke(
    chatInput('an', 'claude-x', { tools: [weather], tool_choice: 'required', response_format: person }),
    signal('claude-x')
  );
  t.same([sent().tools.map((x: any) => x.name), sent().tool_choice], [['weather'], { type: 'any' }]);
  const none = await chat.invoke(
    chatInput('an', 'claude-x', { tools: [weather], tool_choice: 'none', response_format: person }),
    signal('claude-x')
  );
  t.same(
    [sent().tools.map((x: any) => x.name), sent().tool_choice],
    [['weather', 'person'], { type: 'tool', name: 'person' }]
  );
  t.equal(none.finish_reason, 'stop');
  // The answer tool never takes a name the caller's tools use.
  await chat.invoke(
    chatInput('an', 'claude-x', {
      tools: [weather],
      response_format: { type: 'json_schema', json_schema: { name: 'weather' } },
    }),
    signal('claude-x')
  );
  t.same(
    sent().tools.map((x: any) => x.name),
    ['weather', '_weather']
  );
});

t.test('tool_choice: auto, any, a named tool, none', async (t) => {
  const { chat, sent } = await setup(t);
  await chat.invoke(chatInput('an', 'claude-x', { tools: [weather], tool_choice: 'auto' }), signal('claude-x'));
  t.same(sent().tool_choice, { type: 'auto' });
  await chat.invoke(chatInput('an', 'claude-x', { tools: [weather], tool_choice: 'required' }), signal('claude-x'));
  t.same(sent().tool_choice, { type: 'any' });
  const named = await chat.invoke(
    chatInput('an', 'claude-x', { tools: [weather], tool_choice: { type: 'function', function: { name: 'weather' } } }),
    signal('claude-x')
  );
  t.same(sent().tool_choice, { type: 'tool', name: 'weather' });
  t.same(named.tool_calls, [{ id: 'toolu_1', name: 'weather', arguments: '{"city":"text"}' }]);
  const none = await chat.invoke(
    chatInput('an', 'claude-x', { tools: [weather], tool_choice: 'none' }),
    signal('claude-x')
  );
  t.same(sent().tool_choice, { type: 'none' });
  t.equal(sent().tools.length, 1, 'the tools stay declared: earlier turns may name them');
  t.same(
    { content: none.content, finish: none.finish_reason, calls: none.tool_calls },
    { content: 'Hello from fake-anthropic.', finish: 'stop', calls: undefined }
  );
  await chat.invoke(chatInput('an', 'claude-x', { tools: [weather] }), signal('claude-x'));
  t.notOk(sent().tool_choice, "no tool_choice: Anthropic's default (auto)");
});

t.test('stop sequences end the answer: stop_sequences, stop_reason stop_sequence', async (t) => {
  const { fake, chat, stream, sent } = await setup(t);
  fake.next({ content: 'one two END three' });
  const out = await chat.invoke(chatInput('an', 'claude-x', { stop: ['END', 'never'] }), signal('claude-x'));
  t.same(sent().stop_sequences, ['END', 'never']);
  t.same({ content: out.content, finish: out.finish_reason }, { content: 'one two ', finish: 'stop' });
  fake.next({ content: 'one two END three' });
  const s = streamed(
    await collect(await stream.invoke(chatInput('an', 'claude-x', { stop: ['END'] }), signal('claude-x')))
  );
  t.same({ text: s.text, finish: s.finish }, { text: 'one two ', finish: 'stop' });
  await chat.invoke(chatInput('an', 'claude-x'), signal('claude-x'));
  t.notOk('stop_sequences' in sent());
});

t.test('an answer tool called with an empty input streams no fragment: the content is still an object', async (t) => {
  const sse = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const body = [
    sse('message_start', { message: { model: 'claude-x', usage: { input_tokens: 5, output_tokens: 1 } } }),
    sse('content_block_start', {
      index: 0,
      content_block: { type: 'tool_use', id: 'toolu_1', name: 'json_answer', input: {} },
    }),
    sse('content_block_stop', { index: 0 }),
    sse('message_delta', { delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 4 } }),
    sse('message_stop', {}),
  ].map((s) => new TextEncoder().encode(s));
  const s = streamed(
    await collect(
      messagesStream(
        (async function* () {
          yield* body;
        })(),
        'an',
        'json_answer'
      )
    )
  );
  t.same({ text: s.text, finish: s.finish, calls: s.calls }, { text: '{}', finish: 'stop', calls: [] });
});
