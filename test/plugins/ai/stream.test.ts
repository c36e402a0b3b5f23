import t from 'tap';
import { aiApp } from './setup.js';
import { until } from '../../helpers/wait.js';

// database-independent: streams; the cache's rows are chat.test.ts's and the holds core/wallet's, on both.

interface Sse {
  event?: string;
  data: string;
}

function parse(text: string): Sse[] {
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((block) => {
      const ev: Sse = { data: '' };
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) ev.event = line.slice(7);
        if (line.startsWith('data: ')) ev.data += line.slice(6);
      }
      return ev;
    });
}

async function listen(t: any, app: any): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  // After a client abort undici opens a fresh keep-alive socket that sends nothing; Node keeps
  // such a socket until headersTimeout (60 s), so drop every socket before app.close() runs.
  t.teardown(() => app.server.closeAllConnections());
  return `http://127.0.0.1:${app.server.address().port}`;
}

t.test('stream: chunks in order, the last with finish_reason and usage, then [DONE]; charged the usage', async (t) => {
  const { app, key, accountId } = await aiApp(t);
  const url = await listen(t, app);
  const before = await app.svc.wallet.balance(accountId);
  const res = await fetch(`${url}/v1/ai/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ messages: 'hi', stream: true, prefer: 'cheapest' }),
  });
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/event-stream/);
  t.equal(res.headers.get('x-svc-vendor'), 'oa');
  const events = parse(await res.text());
  t.equal(events.at(-1)!.data, '[DONE]');
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data));
  t.equal(chunks.map((c) => c.delta).join(''), 'Hello from fake-openai.');
  t.same(
    chunks.map((c) => c.index),
    chunks.map((_, i) => i)
  );
  t.ok(chunks.slice(0, -1).every((c) => c.finish_reason === null));
  const last = chunks.at(-1);
  t.equal(last.finish_reason, 'stop');
  t.same(last.usage, { input_tokens: 12, output_tokens: 3, total_tokens: 15 });
  t.match(last.metadata, { vendor: 'oa', model: 'alpha', cost_usd: 0.000018, cached: false });
  t.equal(before - (await app.svc.wallet.balance(accountId)), 18);

  const an = parse(
    await (
      await fetch(`${url}/v1/ai/chat`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ messages: 'hi', stream: true, model: 'beta' }),
      })
    ).text()
  );
  const anChunks = an.slice(0, -1).map((e) => JSON.parse(e.data));
  t.equal(anChunks.map((c) => c.delta).join(''), 'Hello from fake-anthropic.');
  t.same(anChunks.at(-1).usage, { input_tokens: 14, output_tokens: 3, total_tokens: 17 });
});

t.test('primary stalls before the first token: the stream comes from the second, charged once', async (t) => {
  const { app, oa, key, accountId } = await aiApp(t);
  const url = await listen(t, app);
  const before = await app.svc.wallet.balance(accountId);
  oa.next({ stall: true });
  const res = await fetch(`${url}/v1/ai/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ messages: 'hi', stream: true, prefer: 'cheapest', max_cost_multiplier: 3 }),
  });
  t.equal(res.status, 200);
  t.equal(res.headers.get('x-svc-vendor'), 'an');
  const chunks = parse(await res.text())
    .slice(0, -1)
    .map((e) => JSON.parse(e.data));
  t.equal(chunks.map((c) => c.delta).join(''), 'Hello from fake-anthropic.');
  t.match(chunks.at(-1).metadata.attempts, [
    { vendor: 'oa', status: 'timeout' },
    { vendor: 'an', status: 'ok' },
  ]);
  t.equal(before - (await app.svc.wallet.balance(accountId)), 40);
  await until('the vendor response to close', () => oa.openResponses === 0, 3000);
  t.pass('the stalled vendor request was aborted');

  oa.next({ status: 500 });
  const again = await fetch(`${url}/v1/ai/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ messages: 'hi', stream: true, vendor: 'oa' }),
  });
  t.equal(again.status, 502, 'every candidate failed before streaming: a plain JSON error');
  t.equal((await again.json()).error.code, 'vendor_error');
});

t.test(
  'a failure after the first token ends the stream with an error event; produced tokens are charged',
  async (t) => {
    const { app, oa, key, accountId } = await aiApp(t);
    const url = await listen(t, app);
    const before = await app.svc.wallet.balance(accountId);
    oa.next({ content: 'one two three four', malformedAfter: 2 });
    const res = await fetch(`${url}/v1/ai/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: 'x', stream: true, vendor: 'oa' }),
    });
    const events = parse(await res.text());
    t.same(
      events.slice(0, 2).map((e) => JSON.parse(e.data).delta),
      ['one ', 'two ']
    );
    const err = events.at(-1)!;
    t.equal(err.event, 'error');
    const body = JSON.parse(err.data);
    t.equal(body.error.code, 'vendor_error');
    t.equal(body.error.status, 502);
    t.match(body.error.request_id, /^req_/);
    t.notOk(events.some((e) => e.data === '[DONE]'));
    // 2 output tokens at 2 USD/M; the input bound of 'x' (13 bytes) counted as ceil(13/4) = 4 tokens at 1 USD/M.
    t.equal(before - (await app.svc.wallet.balance(accountId)), 8);

    oa.next({ content: 'one two three', stallAfter: 1 });
    const slow = await fetch(`${url}/v1/ai/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: 'x', stream: true, vendor: 'oa', timeout_seconds: 0.8 }),
    });
    const slowEvents = parse(await slow.text());
    t.equal(slowEvents.at(-1)!.event, 'error');
    t.equal(
      JSON.parse(slowEvents.at(-1)!.data).error.code,
      'vendor_timeout',
      'timeout_seconds bounds the whole stream'
    );
  }
);

t.test('a client that disconnects aborts the vendor call and pays only for the tokens produced', async (t) => {
  const { app, oa, key, accountId } = await aiApp(t);
  const url = await listen(t, app);
  const before = await app.svc.wallet.balance(accountId);
  oa.next({ content: 'one two three four five', stallAfter: 2 });
  const ctrl = new AbortController();
  const res = await fetch(`${url}/v1/ai/chat`, {
    method: 'POST',
    signal: ctrl.signal,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ messages: 'x', stream: true, vendor: 'oa' }),
  });
  const reader = res.body!.getReader();
  let text = '';
  while ((text.match(/\n\n/g) ?? []).length < 2) text += new TextDecoder().decode((await reader.read()).value);
  t.equal(oa.openResponses, 1, 'the vendor stream is open');
  ctrl.abort();
  await until('the vendor response to close', () => oa.openResponses === 0, 3000);
  t.pass('the vendor call was aborted');
  const noHolds = async () =>
    (await app.svc.db.selectFrom('wallet_holds').selectAll().execute()).length === 0
    && app.svc.wallet.holdsInMemory(accountId) === 0;
  await until('every hold to be settled or released', noHolds, 3000);
  t.equal(before - (await app.svc.wallet.balance(accountId)), 8, '2 output tokens and the input, not the reservation');
});

t.test('streamed tool calls arrive as tool_calls deltas; finish_reason tool_calls', async (t) => {
  const { app, key } = await aiApp(t);
  const url = await listen(t, app);
  const tools = [{ type: 'function', function: { name: 'weather', parameters: { type: 'object' } } }];
  for (const vendor of ['oa', 'an']) {
    const res = await fetch(`${url}/v1/ai/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: 'Weather?', stream: true, vendor, tools }),
    });
    const chunks = parse(await res.text())
      .slice(0, -1)
      .map((e) => JSON.parse(e.data));
    const deltas = chunks.flatMap((c) => c.tool_calls ?? []);
    t.equal(deltas[0].name, 'weather', vendor);
    t.ok(deltas[0].id, vendor);
    t.same(JSON.parse(deltas.map((d: any) => d.arguments ?? '').join('')), { city: 'Paris' }, vendor);
    t.equal(chunks.at(-1).finish_reason, 'tool_calls', vendor);
  }
});

t.test(
  'a streamed chat with an idempotency key: a retry replays the answer as a stream, charged once; a broken stream gives the key back',
  async (t) => {
    const { app, key, oa, accountId } = await aiApp(t);
    const url = await listen(t, app);
    const body = JSON.stringify({ messages: 'hi', stream: true, vendor: 'oa', idempotency_key: 'stream-1' });
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const bal = await app.svc.wallet.balance(accountId);
    const first = await fetch(`${url}/v1/ai/chat`, { method: 'POST', headers, body });
    const firstEvents = parse(await first.text());
    t.equal(firstEvents.at(-1)!.data, '[DONE]');
    t.equal(first.headers.get('idempotent-replayed'), null);
    const spent = bal - (await app.svc.wallet.balance(accountId));
    t.ok(spent > 0);
    const calls = oa.requests.length;

    const again = await fetch(`${url}/v1/ai/chat`, { method: 'POST', headers, body });
    t.equal(again.status, 200);
    t.match(again.headers.get('content-type'), /text\/event-stream/);
    t.equal(again.headers.get('idempotent-replayed'), 'true');
    const events = parse(await again.text());
    t.equal(events.at(-1)!.data, '[DONE]');
    const text = (evs: typeof events) =>
      evs
        .slice(0, -1)
        .map((e) => JSON.parse(e.data))
        .map((c) => c.delta ?? '')
        .join('');
    t.equal(text(events), text(firstEvents), 'the same answer');
    const end = JSON.parse(events.at(-2)!.data);
    const firstEnd = JSON.parse(firstEvents.at(-2)!.data);
    t.same(end.usage, firstEnd.usage);
    t.same(end.metadata, firstEnd.metadata, 'its metadata, cost included, as first sent');
    t.equal(oa.requests.length, calls, 'the vendor is not called again');
    t.equal(bal - (await app.svc.wallet.balance(accountId)), spent, 'nor is the caller charged again');

    // The same key with another body is refused; the plain (non-stream) form of the request is another body.
    const other = await fetch(`${url}/v1/ai/chat`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ messages: 'hi', vendor: 'oa', idempotency_key: 'stream-1' }),
    });
    t.equal(other.status, 409);
    t.equal((await other.json()).error.code, 'idempotency_key_reused');

    // A stream that breaks after its first token is not kept: the same key runs it again.
    oa.next({ cutAfter: 1 });
    const broken = JSON.stringify({ messages: 'again', stream: true, vendor: 'oa', idempotency_key: 'stream-2' });
    const cut = await fetch(`${url}/v1/ai/chat`, { method: 'POST', headers, body: broken });
    t.match(await cut.text(), /event: error/);
    const retry = await fetch(`${url}/v1/ai/chat`, { method: 'POST', headers, body: broken });
    t.equal(retry.headers.get('idempotent-replayed'), null);
    t.equal(parse(await retry.text()).at(-1)!.data, '[DONE]');
  }
);

t.test('cache_strategy service works for streams: a finished stream is cached and replayed as one', async (t) => {
  const { app, oa, key } = await aiApp(t);
  const url = await listen(t, app);
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const body = JSON.stringify({ messages: 'cache me', stream: true, vendor: 'oa', cache_strategy: 'service' });
  const first = parse(await (await fetch(`${url}/v1/ai/chat`, { method: 'POST', headers, body })).text())
    .slice(0, -1)
    .map((e) => JSON.parse(e.data));
  t.equal(first.at(-1).metadata.cached, false);
  const second = parse(await (await fetch(`${url}/v1/ai/chat`, { method: 'POST', headers, body })).text());
  t.equal(second.at(-1)!.data, '[DONE]');
  const chunks = second.slice(0, -1).map((e) => JSON.parse(e.data));
  t.equal(chunks.map((c) => c.delta).join(''), 'Hello from fake-openai.');
  t.equal(chunks.at(-1).metadata.cached, true);
  t.same(chunks.at(-1).usage, first.at(-1).usage);
  t.equal(oa.requests.length, 1, 'the vendor was called once');
  const plain = (
    await app.inject({
      method: 'POST',
      url: '/v1/ai/chat',
      headers: { authorization: `Bearer ${key}` },
      payload: { messages: 'cache me', vendor: 'oa', cache_strategy: 'service' },
    })
  ).json();
  t.equal(plain.metadata.cached, true, 'the same request without stream is the same answer');
  t.equal(plain.content, 'Hello from fake-openai.');
});

t.test(
  'a stream answered from the service cache is kept for its idempotency key too: a retry pays the cache once',
  async (t) => {
    const { app, key, accountId } = await aiApp(t, { plugins: { ai: { cache_price_usd: 0.000002 } } });
    const url = await listen(t, app);
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const warm = await fetch(`${url}/v1/ai/chat`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ messages: 'cache me', stream: true, vendor: 'oa', cache_strategy: 'service' }),
    });
    await warm.text();
    const body = JSON.stringify({
      messages: 'cache me',
      stream: true,
      vendor: 'oa',
      cache_strategy: 'service',
      idempotency_key: 'cached-1',
    });
    const bal = await app.svc.wallet.balance(accountId);
    const hit = await fetch(`${url}/v1/ai/chat`, { method: 'POST', headers, body });
    t.equal(parse(await hit.text()).at(-1)!.data, '[DONE]');
    t.equal(bal - (await app.svc.wallet.balance(accountId)), 2, 'the cache price');
    const again = await fetch(`${url}/v1/ai/chat`, { method: 'POST', headers, body });
    t.equal(again.headers.get('idempotent-replayed'), 'true');
    t.equal(parse(await again.text()).at(-1)!.data, '[DONE]');
    t.equal(bal - (await app.svc.wallet.balance(accountId)), 2, 'not charged again');
  }
);
