import t from 'tap';
import { aiApp } from './setup.js';
import { makeApp, activate } from '../../helpers/app.js';
import { openAiFake } from '../../fakes/openai-fake.js';

const ledger = (app: any, accountId: string) =>
  app.svc.db
    .selectFrom('wallet_ledger')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('kind', '=', 'usage')
    .execute();

t.test('chat with a prompt string: ChatResult, metadata, cost headers, exact charge', async (t) => {
  const { app, oa, auth, accountId } = await aiApp(t);
  const before = await app.svc.wallet.balance(accountId);
  const res = await app.inject({
    method: 'POST',
    url: '/v1/ai/chat',
    headers: auth,
    payload: { messages: 'Say hi', prefer: 'cheapest', temperature: 0.5, max_tokens: 20 },
  });
  t.equal(res.statusCode, 200, res.body);
  const r = res.json();
  t.equal(r.content, 'Hello from fake-openai.');
  t.equal(r.finish_reason, 'stop');
  t.same(r.usage, { input_tokens: 12, output_tokens: 3, total_tokens: 15 });
  t.match(r.metadata, {
    vendor: 'oa',
    model: 'alpha',
    cost_usd: 0.000018,
    cached: false,
    byok: false,
    attempts: [{ vendor: 'oa', model: 'alpha', status: 'ok' }],
  });
  t.type(r.metadata.latency_ms, 'number');
  // 12 input tokens at 1 USD/M + 3 output at 2 USD/M = 18 micro-USD, exactly.
  t.equal(before - (await app.svc.wallet.balance(accountId)), 18);
  t.equal(res.headers['x-svc-cost-usd'], '0.000018');
  t.equal(res.headers['x-svc-vendor'], 'oa');
  t.same(oa.requests.at(-1)!.body, {
    model: 'alpha',
    messages: [{ role: 'user', content: 'Say hi' }],
    temperature: 0.5,
    max_completion_tokens: 20,
  });
  const holds = await app.svc.db.selectFrom('wallet_holds').selectAll().execute();
  t.equal(holds.length + app.svc.wallet.holdsInMemory(accountId), 0, 'no hold left behind');
});

t.test(
  'routing: prefer orders, model and vendor pin, task picks fitting models, tools and JSON pass through',
  async (t) => {
    const { app, auth } = await aiApp(t);
    const chat = async (payload: Record<string, unknown>) =>
      (await app.inject({ method: 'POST', url: '/v1/ai/chat', headers: auth, payload })).json();
    t.equal((await chat({ messages: 'x', prefer: 'cheapest' })).metadata.vendor, 'oa');
    t.equal((await chat({ messages: 'x', prefer: 'smartest' })).metadata.vendor, 'an');
    t.equal((await chat({ messages: 'x', model: 'beta' })).metadata.model, 'beta');
    t.equal((await chat({ messages: 'x', vendor: 'oa', prefer: 'smartest' })).metadata.vendor, 'oa');
    t.equal(
      (await chat({ messages: 'x', task: 'reasoning', prefer: 'cheapest' })).metadata.model,
      'beta',
      'only beta fits reasoning'
    );
    t.equal(
      (await chat({ messages: 'x', task: 'coding', prefer: 'smartest' })).metadata.model,
      'alpha',
      'only alpha fits coding'
    );
    const tools = [
      {
        type: 'function',
        function: {
          name: 'weather',
          description: 'Weather',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
        },
      },
    ];
    const tc = await chat({
      messages: [
        { role: 'system', content: 'Be brief' },
        { role: 'user', content: 'Weather in Paris?' },
      ],
      tools,
      prefer: 'cheapest',
      response_format: { type: 'json_object' },
    });
    t.equal(tc.finish_reason, 'tool_calls');
    t.same(tc.tool_calls, [{ id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' }]);
    const an = await chat({ messages: [{ role: 'user', content: 'Weather?' }], tools, model: 'beta' });
    t.same(an.tool_calls, [{ id: 'toolu_1', name: 'weather', arguments: '{"city":"Paris"}' }]);

    const unknown = await app.inject({
      method: 'POST',
      url: '/v1/ai/chat',
      headers: auth,
      payload: { messages: 'x', model: 'gpt-9' },
    });
    t.equal(unknown.statusCode, 503);
    t.equal(unknown.json().error.code, 'no_vendor_available');
    t.equal(unknown.json().error.param, 'model');
    const noVendor = await app.inject({
      method: 'POST',
      url: '/v1/ai/chat',
      headers: auth,
      payload: { messages: 'x', vendor: 'mistral' },
    });
    t.equal(noVendor.statusCode, 503);
    t.match(noVendor.json().error.message, /POST \/v1\/byok/);
  }
);

t.test('bad input is a 400 that charges nothing and calls no vendor', async (t) => {
  const { app, oa, an, auth, accountId } = await aiApp(t);
  const before = await app.svc.wallet.balance(accountId);
  for (const payload of [
    {},
    { messages: [] },
    { messages: 'x', nope: 1 },
    { messages: [{ role: 'robot', content: 'x' }] },
    { messages: 'x', prefer: 'fastest' },
    { messages: 'x', max_tokens: 0 },
    { messages: 'x', temperature: 5 },
  ]) {
    const res = await app.inject({ method: 'POST', url: '/v1/ai/chat', headers: auth, payload });
    t.equal(res.statusCode, 400, JSON.stringify(payload));
    t.equal(res.json().error.code, 'validation_failed');
  }
  const batch = await app.inject({
    method: 'POST',
    url: '/v1/ai/chat',
    headers: auth,
    payload: { messages: 'x', batch_mode: true, stream: true },
  });
  t.equal(batch.statusCode, 400);
  t.equal(batch.json().error.param, 'batch_mode');
  t.equal(oa.requests.length + an.requests.length, 0);
  t.equal(await app.svc.wallet.balance(accountId), before);
  const noKey = await app.inject({ method: 'POST', url: '/v1/ai/chat', payload: { messages: 'x' } });
  t.equal(noKey.statusCode, 401);
});

t.test('failover: primary 500, the second answers, the caller is charged once for the second', async (t) => {
  const { app, oa, auth, accountId } = await aiApp(t);
  const before = await app.svc.wallet.balance(accountId);
  oa.next({ status: 500 });
  const res = await app.inject({
    method: 'POST',
    url: '/v1/ai/chat',
    headers: auth,
    payload: { messages: 'hello', prefer: 'cheapest', max_cost_multiplier: 3 },
  });
  t.equal(res.statusCode, 200, res.body);
  const r = res.json();
  t.equal(r.content, 'Hello from fake-anthropic.');
  t.match(r.metadata.attempts, [
    { vendor: 'oa', model: 'alpha', status: 'unavailable' },
    { vendor: 'an', model: 'beta', status: 'ok' },
  ]);
  // Anthropic fake usage: 14 in at 2 USD/M + 3 out at 4 USD/M = 40 micro-USD.
  t.equal(r.metadata.cost_usd, 0.00004);
  t.equal(before - (await app.svc.wallet.balance(accountId)), 40);
  const entries = await ledger(app, accountId);
  t.equal(entries.length, 1, 'one charge');
  t.equal(Number(entries[0].amount_micros), -40);
  t.equal(entries[0].vendor, 'an');
});

t.test('429 with retry-after fails over and cools the vendor down for that long', async (t) => {
  const { app, oa, an, auth } = await aiApp(t);
  oa.next({ status: 429, retryAfter: '30' });
  const r = (
    await app.inject({
      method: 'POST',
      url: '/v1/ai/chat',
      headers: auth,
      payload: { messages: 'x', prefer: 'cheapest', max_cost_multiplier: 3 },
    })
  ).json();
  t.match(r.metadata.attempts, [
    { vendor: 'oa', status: 'rate_limited' },
    { vendor: 'an', status: 'ok' },
  ]);
  t.ok(app.svc.router.cooldowns.cooling('oa'));
  t.ok(app.svc.router.cooldowns.snapshot().oa.until - Date.now() > 25_000);
  const before = oa.requests.length;
  const next = (
    await app.inject({
      method: 'POST',
      url: '/v1/ai/chat',
      headers: auth,
      payload: { messages: 'x', prefer: 'cheapest', max_cost_multiplier: 3 },
    })
  ).json();
  t.equal(next.metadata.vendor, 'an', 'the cooling vendor goes last');
  t.equal(oa.requests.length, before);
  t.ok(an.requests.length >= 2);
});

t.test('no candidate within the cost cap: 502 with attempts, nothing charged', async (t) => {
  const { app, oa, an, auth, accountId } = await aiApp(t);
  const before = await app.svc.wallet.balance(accountId);
  oa.next({ status: 500 });
  const res = await app.inject({
    method: 'POST',
    url: '/v1/ai/chat',
    headers: auth,
    payload: { messages: 'hello', prefer: 'cheapest', max_cost_multiplier: 1.2 },
  });
  t.equal(res.statusCode, 502);
  const e = res.json().error;
  t.equal(e.code, 'vendor_error');
  t.match(e.details.attempts, [
    { vendor: 'oa', model: 'alpha', status: 'unavailable' },
    { vendor: 'an', model: 'beta', status: 'skipped_cost_cap' },
  ]);
  t.equal(an.requests.length, 0);
  t.equal(await app.svc.wallet.balance(accountId), before);
  t.equal((await ledger(app, accountId)).length, 0);
});

t.test('a vendor that does not answer within timeout_seconds is a 504, released in full', async (t) => {
  const { app, oa, auth, accountId } = await aiApp(t);
  const before = await app.svc.wallet.balance(accountId);
  oa.next({ stall: true });
  const res = await app.inject({
    method: 'POST',
    url: '/v1/ai/chat',
    headers: auth,
    payload: { messages: 'x', vendor: 'oa', timeout_seconds: 0.3 },
  });
  t.equal(res.statusCode, 504);
  t.equal(res.json().error.code, 'vendor_timeout');
  t.equal(await app.svc.wallet.balance(accountId), before);
});

t.test('cache_strategy service answers an identical request from the cache, per account', async (t) => {
  const { app, oa, auth } = await aiApp(t, { plugins: { ai: { cache_price_usd: 0.000001 } } });
  const payload = { messages: 'cache me', prefer: 'cheapest', cache_strategy: 'service' };
  const first = (await app.inject({ method: 'POST', url: '/v1/ai/chat', headers: auth, payload })).json();
  t.equal(first.metadata.cached, false);
  const second = await app.inject({ method: 'POST', url: '/v1/ai/chat', headers: auth, payload });
  t.equal(second.json().metadata.cached, true);
  t.equal(second.json().content, first.content);
  t.equal(second.json().metadata.cost_usd, 0.000001);
  t.equal(second.headers['x-svc-cost-usd'], '0.000001');
  t.equal(oa.requests.length, 1);
  const none = (
    await app.inject({
      method: 'POST',
      url: '/v1/ai/chat',
      headers: auth,
      payload: { ...payload, cache_strategy: 'none' },
    })
  ).json();
  t.equal(none.metadata.cached, false);
  t.equal(oa.requests.length, 2);
  const other = await app.inject({ method: 'POST', url: '/v1/activate', payload: {} });
  const otherAuth = { authorization: `Bearer ${other.json().primary_api_key}` };
  t.equal(
    (await app.inject({ method: 'POST', url: '/v1/ai/chat', headers: otherAuth, payload })).json().metadata.cached,
    false,
    'another account has its own cache'
  );
});

t.test('idempotency_key replays the answer without a second charge', async (t) => {
  const { app, oa, auth, accountId } = await aiApp(t);
  const payload = { messages: 'once', prefer: 'cheapest', idempotency_key: 'chat-1' };
  const a = await app.inject({ method: 'POST', url: '/v1/ai/chat', headers: auth, payload });
  const bal = await app.svc.wallet.balance(accountId);
  const b = await app.inject({ method: 'POST', url: '/v1/ai/chat', headers: auth, payload });
  t.equal(b.headers['idempotent-replayed'], 'true');
  t.equal(b.body, a.body);
  t.equal(oa.requests.length, 1);
  t.equal(await app.svc.wallet.balance(accountId), bal);
});

t.test('the account region filters vendors', async (t) => {
  const { app } = await aiApp(t);
  const act = await app.inject({ method: 'POST', url: '/v1/activate', payload: { region: 'china' } });
  const auth = { authorization: `Bearer ${act.json().primary_api_key}` };
  // alpha is global, beta western-only; the instances' adapters serve western: nothing for china.
  const res = await app.inject({
    method: 'POST',
    url: '/v1/ai/chat',
    headers: auth,
    payload: { messages: 'x', model: 'beta' },
  });
  t.equal(res.statusCode, 503);
  t.match(res.json().error.message, /china/);
  // Pinning a vendor that exists but not for the account's region is a refusal (conventions: 403).
  for (const payload of [
    { messages: 'x', vendor: 'an' },
    { messages: 'x', vendor: 'anthropic' },
    { messages: 'x', vendor: 'oa', model: 'alpha' },
  ]) {
    const pinned = await app.inject({ method: 'POST', url: '/v1/ai/chat', headers: auth, payload });
    t.equal(pinned.statusCode, 403, JSON.stringify(payload));
    t.match(pinned.json().error, { code: 'region_not_allowed', param: 'vendor', message: /china/ });
  }
  // A vendor that does not exist at all stays a 503 that says how to add one.
  t.equal(
    (
      await app.inject({
        method: 'POST',
        url: '/v1/ai/chat',
        headers: auth,
        payload: { messages: 'x', vendor: 'nope' },
      })
    ).statusCode,
    503
  );
});

t.test('embeddings in input order, charged for input tokens', async (t) => {
  const { app, auth, accountId } = await aiApp(t);
  const before = await app.svc.wallet.balance(accountId);
  const res = await app.inject({
    method: 'POST',
    url: '/v1/ai/embed',
    headers: auth,
    payload: { input: ['one two', 'three'], dimensions: 6 },
  });
  t.equal(res.statusCode, 200, res.body);
  const r = res.json();
  t.equal(r.model, 'emb');
  t.equal(r.embeddings.length, 2);
  t.equal(r.embeddings[0].length, 6);
  t.notSame(r.embeddings[0], r.embeddings[1]);
  t.same(r.usage, { input_tokens: 3, total_tokens: 3 });
  t.equal(r.metadata.vendor, 'oa');
  t.equal(before - (await app.svc.wallet.balance(accountId)), 3);
  const one = (
    await app.inject({ method: 'POST', url: '/v1/ai/embed', headers: auth, payload: { input: 'three', dimensions: 6 } })
  ).json();
  t.same(one.embeddings[0], r.embeddings[1], 'same text, same vector');
});

t.test('200 concurrent chats against a wallet that covers 50: exactly 50 answered, balance exact', async (t) => {
  // Model `fixed` is output-only at 1 USD/M: max_tokens 1000 reserves 1000 micro-USD and the
  // fake reports exactly 1000 output tokens, so each answered call costs 0.001 USD.
  const { app, oa, auth, accountId } = await aiApp(t, { wallet: { trial_credit_usd: 0.05 } });
  oa.defaults = { usage: { input: 7, output: 1000 } };
  t.equal(await app.svc.wallet.balance(accountId), 50_000);
  const results = await Promise.all(
    Array.from({ length: 200 }, () =>
      app.inject({
        method: 'POST',
        url: '/v1/ai/chat',
        headers: auth,
        payload: { messages: 'go', model: 'fixed', max_tokens: 1000 },
      })
    )
  );
  const ok = results.filter((r) => r.statusCode === 200).length;
  const poor = results.filter((r) => r.statusCode === 402 && r.json().error.code === 'insufficient_balance').length;
  t.equal(ok, 50);
  t.equal(poor, 150);
  t.equal(await app.svc.wallet.balance(accountId), 0);
  const entries = await ledger(app, accountId);
  t.equal(entries.length, 50);
  t.equal(
    entries.reduce((s: number, e: any) => s + Number(e.amount_micros), 0),
    -50_000
  );
});

t.test('anthropic as primary: 529 overloaded and a stall both fail over to the cheaper second', async (t) => {
  const { app, an, auth } = await aiApp(t);
  an.next({ status: 529 });
  const r = (
    await app.inject({
      method: 'POST',
      url: '/v1/ai/chat',
      headers: auth,
      payload: { messages: 'x', prefer: 'smartest' },
    })
  ).json();
  t.match(r.metadata.attempts, [
    { vendor: 'an', model: 'beta', status: 'unavailable', error: { message: /Overloaded/ } },
    { vendor: 'oa', model: 'alpha', status: 'ok' },
  ]);
  app.svc.router.cooldowns.success('an');
  an.next({ stall: true });
  const slow = await app.inject({
    method: 'POST',
    url: '/v1/ai/chat',
    headers: auth,
    payload: { messages: 'x', prefer: 'smartest', timeout_seconds: 1 },
  });
  t.equal(slow.statusCode, 200, slow.body);
  t.match(slow.json().metadata.attempts, [
    { vendor: 'an', status: 'timeout' },
    { vendor: 'oa', status: 'ok' },
  ]);
});

t.test('prefer orders the candidates: balanced (the default) by the sum of the price and quality ranks', async (t) => {
  // Three instances on one OpenAI fake, one model each: cheapo (cheapest, weakest), middy
  // (second cheapest, smartest), fancy (dearest, second smartest). Ranks by price 0/1/2 and by
  // quality 2/0/1: balanced sums to 2/1/3, so middy, cheapo, fancy; smartest gives middy,
  // fancy, cheapo; cheapest cheapo, middy, fancy. Every attempt but the last fails, so
  // metadata.attempts shows the order (the cost cap is lifted so nobody is skipped).
  const models = [
    { id: 'cheapo', price: { in: 1_000_000, out: 1_000_000 }, quality: 10 },
    { id: 'middy', price: { in: 2_000_000, out: 2_000_000 }, quality: 95 },
    { id: 'fancy', price: { in: 10_000_000, out: 10_000_000 }, quality: 90 },
  ].map((m) => ({
    ...m,
    vendor: 'openai',
    family: m.id,
    tasks: ['general'],
    context_window: 8000,
    max_output: 1000,
    capabilities: ['chat'],
    regions: ['global'],
  }));
  const cases: Array<[string | undefined, string[]]> = [
    [undefined, ['i-middy', 'i-cheapo', 'i-fancy']],
    ['smartest', ['i-middy', 'i-fancy', 'i-cheapo']],
    ['cheapest', ['i-cheapo', 'i-middy', 'i-fancy']],
  ];
  for (const [prefer, expected] of cases) {
    const fake = await openAiFake({ key: 'sk-oa' }).start('/v1');
    t.teardown(() => fake.close());
    const { app } = await makeApp(t, {
      vendors: models.map((m) => ({
        id: `i-${m.id}`,
        use: 'openai',
        config: { api_key: 'sk-oa', base_url: fake.url, models: [m.id] },
      })),
      plugins: { ai: { models } },
    });
    const { auth } = await activate(app);
    fake.next({ status: 500 });
    fake.next({ status: 500 });
    const res = await app.inject({
      method: 'POST',
      url: '/v1/ai/chat',
      headers: auth,
      payload: { messages: 'x', max_cost_multiplier: 100, ...(prefer ? { prefer } : {}) },
    });
    t.equal(res.statusCode, 200, res.body.slice(0, 300));
    t.same(
      res.json().metadata.attempts.map((a: { vendor: string }) => a.vendor),
      expected,
      `prefer ${prefer ?? '(default: balanced)'}`
    );
  }
});

t.test(
  "an openai-compatible preset's instance serves the preset's regions unless the config names others",
  async (t) => {
    const fake = await openAiFake({ key: 'sk-q' }).start('/v1');
    t.teardown(() => fake.close());
    const { app } = await makeApp(t, {
      vendors: [
        // Qwen (DashScope) is a china preset; `my-local` is in no catalog (a model of the server's own).
        {
          id: 'qw',
          use: 'openai-compatible',
          config: { preset: 'qwen', base_url: fake.url, api_key: 'sk-q', models: ['my-local'] },
        },
        {
          id: 'qw-anywhere',
          use: 'openai-compatible',
          regions: ['global'],
          config: { preset: 'qwen', base_url: fake.url, api_key: 'sk-q', models: ['my-local'] },
        },
      ],
    });
    const as = async (region: string) => ({
      authorization: `Bearer ${(await app.inject({ method: 'POST', url: '/v1/activate', payload: { region } })).json().primary_api_key}`,
    });
    const chat = async (region: string, vendor: string) =>
      app.inject({ method: 'POST', url: '/v1/ai/chat', headers: await as(region), payload: { messages: 'x', vendor } });
    t.equal((await chat('china', 'qw')).json().metadata?.vendor, 'qw');
    const west = await chat('western', 'qw');
    t.equal(west.statusCode, 403, 'a china preset is not served to a western account');
    t.equal(west.json().error.code, 'region_not_allowed');
    t.equal(
      (await chat('western', 'qw-anywhere')).json().metadata?.vendor,
      'qw-anywhere',
      "the config's regions override the preset's"
    );
  }
);
