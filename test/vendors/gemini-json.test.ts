import t from 'tap';
import gemini from '../../vendors/gemini/index.js';
import { toGeminiSchema } from '../../vendors/gemini/schema.js';
import { geminiFake } from '../fakes/gemini-fake.js';
import { chatInput, collect, instance, PERSON_SCHEMA, signal, streamed } from './chat-setup.js';

const person = { type: 'json_schema' as const, json_schema: { name: 'person', schema: PERSON_SCHEMA } };
const PERSON = { name: 'text', age: 1, role: 'admin', address: { city: 'text' } };
const weather = {
  type: 'function' as const,
  function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};

async function setup(t: { teardown(fn: () => unknown): void }) {
  const fake = await geminiFake({ key: 'gk' }).start('/v1beta');
  t.teardown(() => fake.close());
  const inst = await instance(gemini, 'gm', { api_key: 'gk', base_url: fake.url });
  return {
    fake,
    chat: inst.capabilities['ai.chat'],
    stream: inst.capabilities['ai.chat.stream'],
    sent: () => fake.requests.at(-1)!.body,
  };
}

t.test('json_schema on Gemini 2.5+: responseMimeType and the schema as responseJsonSchema, unchanged', async (t) => {
  const { chat, stream, sent } = await setup(t);
  const out = await chat.invoke(
    chatInput('gm', 'gemini-2.5-flash', { response_format: person }),
    signal('gemini-2.5-flash')
  );
  t.same(sent().generationConfig, {
    maxOutputTokens: 50,
    responseMimeType: 'application/json',
    responseJsonSchema: PERSON_SCHEMA,
  });
  t.same(JSON.parse(out.content!), PERSON);
  t.equal(out.finish_reason, 'stop');
  const s = streamed(
    await collect(
      await stream.invoke(chatInput('gm', 'gemini-2.5-flash', { response_format: person }), signal('gemini-2.5-flash'))
    )
  );
  t.same(sent().generationConfig.responseJsonSchema, PERSON_SCHEMA);
  t.same(JSON.parse(s.text), PERSON);
  // No schema given: JSON, any shape.
  await chat.invoke(
    chatInput('gm', 'gemini-2.5-flash', { response_format: { type: 'json_schema', json_schema: { name: 'free' } } }),
    signal('gemini-2.5-flash')
  );
  t.same(sent().generationConfig, { maxOutputTokens: 50, responseMimeType: 'application/json' });
});

t.test(
  'json_schema on Gemini 2.0 and 1.x: converted to the OpenAPI-subset responseSchema the fake checks key by key',
  async (t) => {
    const { chat, sent } = await setup(t);
    const out = await chat.invoke(
      chatInput('gm', 'gemini-2.0-flash', { response_format: person }),
      signal('gemini-2.0-flash')
    );
    t.same(sent().generationConfig.responseSchema, {
      type: 'OBJECT',
      properties: {
        name: { type: 'STRING', description: 'Full name' },
        age: { type: 'INTEGER', nullable: true },
        role: { type: 'STRING', enum: ['admin'] },
        address: { type: 'OBJECT', properties: { city: { type: 'STRING' } }, required: ['city'] },
      },
      required: ['name', 'age', 'role', 'address'],
    });
    t.notOk('responseJsonSchema' in sent().generationConfig);
    t.same(JSON.parse(out.content!), PERSON);
    await chat.invoke(chatInput('gm', 'gemini-1.5-pro', { response_format: person }), signal('gemini-1.5-pro'));
    t.ok(sent().generationConfig.responseSchema);
  }
);

t.test('the JSON Schema to Gemini Schema conversion: unions, allOf, recursion, unknown keywords', async (t) => {
  t.same(toGeminiSchema({ anyOf: [{ type: 'string' }, { type: 'null' }], description: 'd' }), {
    anyOf: [{ type: 'STRING' }],
    description: 'd',
    nullable: true,
  });
  t.same(toGeminiSchema({ type: ['string', 'number'] }), { anyOf: [{ type: 'STRING' }, { type: 'NUMBER' }] });
  t.same(
    toGeminiSchema({
      allOf: [{ properties: { a: { type: 'string' } }, required: ['a'] }, { properties: { b: { type: 'boolean' } } }],
    }),
    { type: 'OBJECT', properties: { a: { type: 'STRING' }, b: { type: 'BOOLEAN' } }, required: ['a'] }
  );
  t.same(
    toGeminiSchema({
      type: 'array',
      items: { type: 'number', format: 'decimal', exclusiveMinimum: 0, enum: [1, 2] },
      minItems: 1,
    }),
    { type: 'ARRAY', minItems: 1, items: { type: 'NUMBER' } },
    'unknown keywords, formats and non-string enums are dropped'
  );
  const tree = toGeminiSchema({
    $ref: '#/definitions/node',
    definitions: {
      node: { type: 'object', properties: { kids: { type: 'array', items: { $ref: '#/definitions/node' } } } },
    },
  });
  let depth = 0;
  for (let n: any = tree; n?.properties; n = n.properties.kids.items) depth++;
  t.equal(depth, 8, 'a recursive schema is inlined 8 levels deep, then ends in an open object');
});

t.test('json_object: responseMimeType only', async (t) => {
  const { chat, sent } = await setup(t);
  const out = await chat.invoke(
    chatInput('gm', 'gemini-2.5-flash', { response_format: { type: 'json_object' } }),
    signal('gemini-2.5-flash')
  );
  t.same(sent().generationConfig, { maxOutputTokens: 50, responseMimeType: 'application/json' });
  t.equal(out.content, '{"ok":true}');
});

t.test('stop sequences and tool_choice: stopSequences, toolConfig.functionCallingConfig', async (t) => {
  const { fake, chat, stream, sent } = await setup(t);
  fake.next({ content: 'one two END three' });
  const out = await chat.invoke(chatInput('gm', 'gemini-2.5-flash', { stop: ['END'] }), signal('gemini-2.5-flash'));
  t.same(sent().generationConfig.stopSequences, ['END']);
  t.same({ content: out.content, finish: out.finish_reason }, { content: 'one two ', finish: 'stop' });
  fake.next({ content: 'one two END three' });
  t.equal(
    streamed(
      await collect(
        await stream.invoke(chatInput('gm', 'gemini-2.5-flash', { stop: ['END'] }), signal('gemini-2.5-flash'))
      )
    ).text,
    'one two '
  );

  const none = await chat.invoke(
    chatInput('gm', 'gemini-2.5-flash', { tools: [weather], tool_choice: 'none' }),
    signal('gemini-2.5-flash')
  );
  t.same(sent().toolConfig, { functionCallingConfig: { mode: 'NONE' } });
  t.same({ content: none.content, calls: none.tool_calls }, { content: 'Hello from fake-gemini.', calls: undefined });
  await chat.invoke(
    chatInput('gm', 'gemini-2.5-flash', { tools: [weather], tool_choice: 'auto' }),
    signal('gemini-2.5-flash')
  );
  t.same(sent().toolConfig, { functionCallingConfig: { mode: 'AUTO' } });
  await chat.invoke(
    chatInput('gm', 'gemini-2.5-flash', { tools: [weather], tool_choice: 'required' }),
    signal('gemini-2.5-flash')
  );
  t.same(sent().toolConfig, { functionCallingConfig: { mode: 'ANY' } });
  const named = await chat.invoke(
    chatInput('gm', 'gemini-2.5-flash', {
      tools: [{ type: 'function', function: { name: 'time' } }, weather],
      tool_choice: { type: 'function', function: { name: 'weather' } },
    }),
    signal('gemini-2.5-flash')
  );
  t.same(sent().toolConfig, { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['weather'] } });
  t.equal(named.tool_calls![0].name, 'weather');
  await chat.invoke(chatInput('gm', 'gemini-2.5-flash', { tools: [weather] }), signal('gemini-2.5-flash'));
  t.notOk('toolConfig' in sent());
});
