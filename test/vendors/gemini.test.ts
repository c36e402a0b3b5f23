import t from 'tap';
import pino from 'pino';
import gemini from '../../vendors/gemini/index.js';
import type { VendorFailure } from '../../core/router/failure.js';
import type { VendorInstance } from '../../core/define.js';
import type { ChatInput, ChatStreamEvent } from '../../core/capabilities/ai/chat.js';
import { geminiFake } from '../fakes/gemini-fake.js';
import { aiApp } from '../plugins/ai/setup.js';

// database-independent: the gemini adapter's wire; routing and charging are core's tests', on both.

const ctx = {
  instanceId: 'gm',
  fetch: globalThis.fetch,
  publicUrl: 'http://127.0.0.1',
  dataDir: '/tmp',
  log: pino({ level: 'silent' }),
};
const plan = { model: 'gemini-2.5-flash', price_in: 1_000_000, price_out: 2_000_000, fee: 0 };
const input = (extra: Partial<ChatInput> = {}): ChatInput => ({
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Hi' },
  ],
  estimate: { input_tokens: 100, output_tokens: 50 },
  max_tokens: 50,
  ...extra,
});
const opts = (p: typeof plan & { credentials?: Record<string, string> } = plan) => ({
  signal: new AbortController().signal,
  deadline: Date.now() + 10_000,
  plan: p,
});

async function collect(it: AsyncIterable<ChatStreamEvent>) {
  const out: ChatStreamEvent[] = [];
  for await (const e of it) out.push(e);
  return out;
}

t.test('gemini adapter: generateContent, tools, SSE stream, embeddings, failures', async (t) => {
  const fake = await geminiFake({ key: 'gk' }).start('/v1beta');
  t.teardown(() => fake.close());
  const inst = (await gemini.create({ api_key: 'gk', base_url: fake.url } as any, ctx)) as VendorInstance;
  const chat = inst.capabilities['ai.chat'];
  const out = await chat.invoke(input({ temperature: 0.3, response_format: { type: 'json_object' } }), opts());
  t.same(out, {
    content: '{"ok":true}',
    finish_reason: 'stop',
    usage: { input_tokens: 9, output_tokens: 1 },
    model: 'gemini-2.5-flash',
  });
  const sent = fake.requests.at(-1)!;
  t.equal(sent.path, '/v1beta/models/gemini-2.5-flash:generateContent');
  t.equal(sent.headers['x-goog-api-key'], 'gk');
  t.same(sent.body, {
    contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
    systemInstruction: { parts: [{ text: 'Be brief.' }] },
    generationConfig: { temperature: 0.3, maxOutputTokens: 50, responseMimeType: 'application/json' },
  });

  const tools = [{ type: 'function' as const, function: { name: 'weather', parameters: { type: 'object' } } }];
  const tc = await chat.invoke(input({ tools }), opts());
  t.equal(tc.finish_reason, 'tool_calls');
  t.same(tc.tool_calls, [{ id: 'call_0', name: 'weather', arguments: '{"city":"Paris"}' }]);
  await chat.invoke(
    input({
      tools,
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: null, tool_calls: tc.tool_calls },
        { role: 'tool', content: 'sunny', tool_call_id: 'call_0' },
      ],
    }),
    opts()
  );
  t.same(fake.requests.at(-1)!.body.contents.slice(1), [
    { role: 'model', parts: [{ functionCall: { name: 'weather', args: { city: 'Paris' } } }] },
    { role: 'user', parts: [{ functionResponse: { name: 'weather', response: { content: 'sunny' } } }] },
  ]);

  const events = await collect(await inst.capabilities['ai.chat.stream'].invoke(input(), opts()));
  t.equal(fake.requests.at(-1)!.path, '/v1beta/models/gemini-2.5-flash:streamGenerateContent');
  t.equal(events.map((e) => e.delta ?? '').join(''), 'Hello from fake-gemini.');
  t.same(events.at(-1), { finish_reason: 'stop', usage: { input_tokens: 9, output_tokens: 3 } });

  const emb = await inst.capabilities['ai.embed'].invoke(
    { input: ['a', 'b'], dimensions: 3, estimate: { input_tokens: 2, output_tokens: 0 } },
    opts()
  );
  t.equal(emb.embeddings.length, 2);
  t.equal(emb.embeddings[0].length, 3);

  const fail = async (p: Promise<unknown>) => {
    try {
      const v = await p;
      if (v && typeof (v as any)[Symbol.asyncIterator] === 'function')
        await collect(v as AsyncIterable<ChatStreamEvent>);
    } catch (e) {
      return e as VendorFailure;
    }
    throw new Error('expected a failure');
  };
  fake.next({ status: 429, retryAfter: '2' });
  const rl = await fail(chat.invoke(input(), opts()));
  t.equal(rl.kind, 'rate_limited');
  t.equal(rl.retryAfterMs, 2000);
  fake.next({ status: 500 });
  t.equal((await fail(chat.invoke(input(), opts()))).kind, 'unavailable');
  fake.next({ malformedAfter: 1 });
  t.equal((await fail(inst.capabilities['ai.chat.stream'].invoke(input(), opts()))).kind, 'unavailable');
  fake.next({ cutAfter: 1 });
  t.match((await fail(inst.capabilities['ai.chat.stream'].invoke(input(), opts()))).message, /without a finishReason/);
  const badKey = await fail(chat.invoke(input(), opts({ ...plan, credentials: { api_key: 'nope' } })));
  t.equal(badKey.kind, 'client_error', 'the wire says 400');
  t.equal(inst.classify!(badKey), 'auth', 'the adapter knows it is the key');
  t.same(await inst.health!({ signal: new AbortController().signal }), { ok: true });
  t.equal((await inst.health!({ signal: new AbortController().signal, credentials: { api_key: 'nope' } })).ok, false);
});

t.test('gemini through the gateway: routed chat and a failover from a bad key', async (t) => {
  const fake = await geminiFake({ key: 'gk' }).start('/v1beta');
  t.teardown(() => fake.close());
  const model = {
    id: 'gem',
    vendor: 'gemini',
    family: 'gem',
    tasks: ['general'],
    quality: 95,
    context_window: 8000,
    max_output: 1000,
    price: { in: 1_000_000, out: 1_000_000 },
    capabilities: ['chat'],
    regions: ['global'],
  };
  const { app, auth } = await aiApp(t, {
    vendors: [{ id: 'gm', use: 'gemini', config: { api_key: 'wrong', base_url: fake.url, models: ['gem'] } }],
    plugins: { ai: { models: [model] } },
  });
  const res = await app.inject({
    method: 'POST',
    url: '/v1/ai/chat',
    headers: auth,
    payload: { messages: 'x', vendor: 'gm' },
  });
  t.equal(res.statusCode, 502);
  t.match(
    res.json().error.details.attempts,
    [{ vendor: 'gm', model: 'gem', status: 'auth' }],
    'a bad key is auth, so it fails over rather than blaming the request'
  );
});
