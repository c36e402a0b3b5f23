import t from 'tap';
import OpenAI from 'openai';
import { activate } from '../../helpers/app.js';
import { traceLoggedApp } from '../../helpers/trace-logged-app.js';
import { FakeServer, sse } from '../../fakes/script.js';
import { MODELS } from '../../plugins/ai/setup.js';

// database-independent: scrubbing secrets; the BYOK rows are plugins/byok/byok.test.ts's, on both.

// Operator keys and a tenant's BYOK key, none shaped like a well-known token (sk-…): only the
// router's knowledge of the secrets in play can scrub them, not a pattern.
const OPERATOR_OA = 'opkey-oa-4f9c2e7b1d6a8350';
const OPERATOR_AN = 'opkey-an-93b1c5e0a7d24f68';
const BYOK = 'tenant-own-key-7c3e91ab52d04f86';

/**
 * A vendor (or a proxy in front of one) that echoes what it received in its error body: the
 * headers as JSON, and the bare key it was sent. A body asking for "400" gets a 400 (the
 * router's "rejected the request" path), anything else a 500.
 */
function echoFake() {
  return new FakeServer((req, res) => {
    const bare =
      String(req.headers.authorization ?? '').replace(/^Bearer /, '') || String(req.headers['x-api-key'] ?? '');
    const echo = `rejected key ${bare}; you sent ${JSON.stringify(req.headers)}`;
    if (req.body?.stream && JSON.stringify(req.body).includes('mid-stream')) {
      // Anthropic's wire: one token, then an error event, after the caller's stream has begun.
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      sse(
        res,
        { type: 'message_start', message: { model: 'beta', usage: { input_tokens: 3, output_tokens: 0 } } },
        'message_start'
      );
      sse(
        res,
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } },
        'content_block_delta'
      );
      sse(res, { type: 'error', error: { type: 'overloaded_error', message: echo } }, 'error');
      return res.end();
    }
    const status = JSON.stringify(req.body ?? '').includes('ask-400') ? 400 : 500;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: echo, type: 'server_error' } }));
  });
}

t.test('a vendor echoing the request headers: no operator or BYOK key reaches a response or a log line', async (t) => {
  const oa = await echoFake().start('/v1');
  const an = await echoFake().start();
  t.teardown(() => oa.close());
  t.teardown(() => an.close());
  const { app, logged } = await traceLoggedApp(t, {
    vendors: [
      { id: 'oa', use: 'openai', config: { api_key: OPERATOR_OA, base_url: oa.url, models: ['alpha'] } },
      { id: 'an', use: 'anthropic', config: { api_key: OPERATOR_AN, base_url: an.url, models: ['beta'] } },
    ],
    plugins: { ai: { models: MODELS, first_token_timeout_ms: 2000 }, byok: { platform_fee_usd: 0 } },
    limits: { activate_per_hour: 1000 },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.teardown(() => app.server.closeAllConnections());
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;

  const operator = await activate(app);
  const tenant = await activate(app);
  const reg = await app.inject({
    method: 'POST',
    url: '/v1/byok',
    headers: tenant.auth,
    payload: { provider: 'openai', alias: 'mine', credentials: { api_key: BYOK } },
  });
  t.equal(reg.statusCode, 200, reg.body);

  const bodies: string[] = [];
  const post = async (auth: { authorization: string }, path: string, body: Record<string, unknown>) => {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    bodies.push(text);
    return { status: res.status, text };
  };
  for (const who of [operator, tenant]) {
    for (const content of ['hello', 'ask-400']) {
      const chat = await post(who.auth, '/v1/ai/chat', { messages: content, model: 'alpha' });
      t.equal(chat.status, content === 'ask-400' ? 422 : 502, chat.text);
      t.match(chat.text, /\[redacted\]/, 'the excerpt is there, scrubbed');
      t.equal(
        (await post(who.auth, '/v1/ai/chat', { messages: content, model: 'alpha', stream: true })).status,
        content === 'ask-400' ? 422 : 502
      );
      await post(who.auth, '/v1/openai/chat/completions', { model: 'alpha', messages: [{ role: 'user', content }] });
      await post(who.auth, '/v1/openai/chat/completions', {
        model: 'alpha',
        messages: [{ role: 'user', content }],
        stream: true,
      });
    }
    // The operator's Anthropic key travels in x-api-key, not Authorization.
    t.equal((await post(who.auth, '/v1/ai/chat', { messages: 'hello', model: 'beta' })).status, 502);
    const mid = await post(who.auth, '/v1/ai/chat', { messages: 'mid-stream', model: 'beta', stream: true });
    t.match(mid.text, /stream error: rejected key \[redacted\]/, 'a failure after the first token is scrubbed too');
    const client = new OpenAI({ apiKey: who.key, baseURL: `${base}/v1/openai`, maxRetries: 0 });
    const err = await client.chat.completions
      .create({ model: 'alpha', messages: [{ role: 'user', content: 'hello' }] })
      .catch((e: unknown) => e);
    t.ok(err instanceof OpenAI.APIError, 'the SDK throws an APIError');
    bodies.push((err as Error).message);
  }
  t.equal(
    oa.requests.filter((r) => r.headers.authorization === `Bearer ${BYOK}`).length,
    9,
    "the tenant's calls went out with the BYOK key"
  );
  t.equal(
    oa.requests.filter((r) => r.headers.authorization === `Bearer ${OPERATOR_OA}`).length,
    9,
    "the operator's with the operator key"
  );

  const secrets = [OPERATOR_OA, OPERATOR_AN, BYOK];
  const leaks = (text: string) => secrets.filter((s) => text.includes(s) || text.includes(s.slice(0, 12)));
  t.same(bodies.flatMap(leaks), [], 'no response carries a key');
  const lines = logged().split('\n').filter(Boolean);
  t.ok(
    lines.some((l) => l.includes('vendor call failed')),
    'the failures were logged'
  );
  t.same(
    lines.filter((l) => leaks(l).length),
    [],
    'no log line carries a key'
  );
});
