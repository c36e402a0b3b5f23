import t from 'tap';
import { aiApp } from './setup.js';
import { chatInputBound } from '../../../plugins/ai/input-bound.js';

// database-independent: the input bound reserved; a 402 on the balance is wallet.test.ts's, on both.

/** A JSON schema of about `bytes` bytes: one long description, as a big schema's are. */
function bigSchema(bytes: number) {
  return {
    type: 'object',
    properties: { answer: { type: 'string', description: 'x'.repeat(bytes) } },
    required: ['answer'],
  };
}

t.test('the input bound counts every field vendors bill as input, not only the messages', async (t) => {
  const messages = [{ role: 'user' as const, content: 'hi' }];
  const bare = chatInputBound(messages, {});
  const schema = chatInputBound(messages, {
    response_format: { type: 'json_schema', json_schema: { name: 'a', schema: bigSchema(100_000) } },
  });
  t.ok(schema - bare >= 100_000, `a 100 KB schema adds at least 100 KB (${schema - bare})`);
  const tools = [{ type: 'function' as const, function: { name: 'f', parameters: bigSchema(50_000) } }];
  t.ok(chatInputBound(messages, { tools }) - bare >= 50_000);
  t.ok(chatInputBound(messages, { stop: ['y'.repeat(1000)] }) - bare >= 1000);
  t.ok(chatInputBound([{ role: 'tool', content: '', tool_call_id: 'z'.repeat(500) }], {}) >= 500);
});

t.test('a 100 KB json_schema is reserved for: 402 before sending when the balance cannot cover it', async (t) => {
  const { app, oa, auth, accountId } = await aiApp(t);
  // Leave the account 0.05 USD: a plain chat fits, a 100 KB schema at 1 USD per M input tokens does not.
  const balance = await app.svc.wallet.balance(accountId);
  await app.svc.wallet.debit(accountId, balance - 50_000, 'usage', null);
  const format = { type: 'json_schema', json_schema: { name: 'answer', schema: bigSchema(100_000) } };
  for (const [url, body] of [
    ['/v1/ai/chat', { messages: 'hi', model: 'alpha', response_format: format }],
    [
      '/v1/openai/chat/completions',
      { model: 'alpha', messages: [{ role: 'user', content: 'hi' }], response_format: format },
    ],
  ] as const) {
    const res = await app.inject({ method: 'POST', url, headers: auth, payload: body });
    t.equal(res.statusCode, 402, res.body.slice(0, 300));
    const err = res.json().error;
    t.equal(err.code, 'insufficient_balance');
    if (url === '/v1/ai/chat')
      t.ok(err.details.required_usd >= 0.1, `reserved in proportion to the schema: ${err.details.required_usd} USD`);
  }
  t.equal(oa.requests.length, 0, 'nothing was sent to the vendor');
  t.equal(await app.svc.wallet.balance(accountId), 50_000, 'nothing was charged');
  const plain = await app.inject({
    method: 'POST',
    url: '/v1/ai/chat',
    headers: auth,
    payload: { messages: 'hi', model: 'alpha' },
  });
  t.equal(plain.statusCode, 200, 'the same chat without the schema fits');
});

t.test('service_tier "priority" on the OpenAI surface is refused with a 400; other tiers pass through', async (t) => {
  const { app, oa, auth } = await aiApp(t);
  const ask = (service_tier: string) =>
    app.inject({
      method: 'POST',
      url: '/v1/openai/chat/completions',
      headers: auth,
      payload: { model: 'alpha', messages: [{ role: 'user', content: 'hi' }], service_tier },
    });
  const res = await ask('priority');
  t.equal(res.statusCode, 400);
  t.match(res.json().error, { code: 'validation_failed', param: 'service_tier', message: /priority.*bills above/ });
  t.equal(oa.requests.length, 0, 'nothing sent');
  t.equal((await ask('flex')).statusCode, 200);
  t.equal(oa.requests.at(-1)?.body.service_tier, 'flex');
});
