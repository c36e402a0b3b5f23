import t from 'tap';
import { activate } from '../../helpers/app.js';
import { traceLoggedApp } from '../../helpers/trace-logged-app.js';
import { openAiFake } from '../../fakes/openai-fake.js';
import { aiApp } from '../ai/setup.js';

const SECRET = 'sk-oa';

// The OpenAI instance has no key of its own: it serves only callers who bring theirs.
const byokApp = (t: any) => aiApp(t, { plugins: { byok: { platform_fee_usd: 0.000005 } } }, { oaKey: '' });

t.test('register, list, test, revoke; the secret is never returned nor stored in clear', async (t) => {
  const { app, auth } = await byokApp(t);
  const created = await app.inject({
    method: 'POST',
    url: '/v1/byok',
    headers: auth,
    payload: { provider: 'openai', alias: 'mine', credentials: { api_key: SECRET } },
  });
  t.equal(created.statusCode, 200, created.body);
  const k = created.json();
  t.match(k, { provider: 'openai', alias: 'mine', state: 'active' });
  t.match(k.byok_id, /^byok_/);
  t.match(k.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.notOk(created.body.includes(SECRET));
  const rows = await app.svc.db.selectFrom('byok_keys').selectAll().execute();
  t.equal(rows.length, 1);
  t.notOk(JSON.stringify(rows).includes(SECRET), 'sealed at rest');
  t.match(rows[0].secret, /^v1\./);

  const list = await app.inject({ method: 'GET', url: '/v1/byok', headers: auth });
  t.same(list.json(), { items: [k], next_cursor: null });

  const ok = await app.inject({ method: 'POST', url: `/v1/byok/${k.byok_id}/test`, headers: auth });
  t.equal(ok.statusCode, 200);
  t.equal(ok.json().ok, true);
  t.type(ok.json().latency_ms, 'number');
  t.same((await app.inject({ method: 'GET', url: '/v1/byok', headers: auth })).json().items[0].test_result, ok.json());

  const bad = (
    await app.inject({
      method: 'POST',
      url: '/v1/byok',
      headers: auth,
      payload: { provider: 'openai', alias: 'wrong', credentials: { api_key: 'sk-wrong-key-123' } },
    })
  ).json();
  const failed = await app.inject({ method: 'POST', url: `/v1/byok/${bad.byok_id}/test`, headers: auth });
  t.equal(failed.json().ok, false);
  t.equal(failed.json().error.code, 'vendor_rejected');
  t.notOk(failed.body.includes('sk-wrong'), 'the vendor message is scrubbed of the key');
  const after = (await app.inject({ method: 'GET', url: '/v1/byok', headers: auth })).json().items;
  t.equal(after.find((i: any) => i.byok_id === bad.byok_id).state, 'invalid');

  const del = await app.inject({ method: 'DELETE', url: `/v1/byok/${k.byok_id}`, headers: auth });
  t.same(del.json(), { ok: true });
  t.equal(
    (await app.inject({ method: 'GET', url: '/v1/byok', headers: auth }))
      .json()
      .items.find((i: any) => i.byok_id === k.byok_id).state,
    'revoked'
  );
  const retest = await app.inject({ method: 'POST', url: `/v1/byok/${k.byok_id}/test`, headers: auth });
  t.equal(retest.statusCode, 409);
  t.equal(retest.json().error.code, 'invalid_state');
  const row = await app.svc.db
    .selectFrom('byok_keys')
    .selectAll()
    .where('byok_id', '=', k.byok_id)
    .executeTakeFirstOrThrow();
  t.equal(row.secret, '', 'a revoked key keeps no secret at all');
});

t.test("bad input is rejected without echoing secrets; another account's keys are 404", async (t) => {
  const { app, auth } = await byokApp(t);
  const unknown = await app.inject({
    method: 'POST',
    url: '/v1/byok',
    headers: auth,
    payload: { provider: 'acme', alias: 'x', credentials: { api_key: 'k' } },
  });
  t.equal(unknown.statusCode, 400);
  t.equal(unknown.json().error.param, 'provider');
  const shape = await app.inject({
    method: 'POST',
    url: '/v1/byok',
    headers: auth,
    payload: { provider: 'anthropic', alias: 'x', credentials: { token: 'tok-secret-value' } },
  });
  t.equal(shape.statusCode, 400);
  t.notOk(shape.body.includes('tok-secret-value'));
  t.match(shape.json().error.message, /credentials/);
  for (const payload of [
    { provider: 'openai', alias: 'x' },
    { provider: 'openai', alias: 'x', credentials: { api_key: 1 } },
    { provider: 'openai', alias: '', credentials: {} },
  ]) {
    t.equal((await app.inject({ method: 'POST', url: '/v1/byok', headers: auth, payload })).statusCode, 400);
  }
  t.equal((await app.svc.db.selectFrom('byok_keys').selectAll().execute()).length, 0);

  const mine = (
    await app.inject({
      method: 'POST',
      url: '/v1/byok',
      headers: auth,
      payload: { provider: 'openai', alias: 'a', credentials: { api_key: SECRET } },
    })
  ).json();
  const other = await app.inject({ method: 'POST', url: '/v1/activate', payload: {} });
  const otherAuth = { authorization: `Bearer ${other.json().primary_api_key}` };
  t.same((await app.inject({ method: 'GET', url: '/v1/byok', headers: otherAuth })).json().items, []);
  t.equal(
    (await app.inject({ method: 'POST', url: `/v1/byok/${mine.byok_id}/test`, headers: otherAuth })).statusCode,
    404
  );
  t.equal(
    (await app.inject({ method: 'DELETE', url: `/v1/byok/${mine.byok_id}`, headers: otherAuth })).statusCode,
    404
  );
  t.equal((await app.inject({ method: 'GET', url: '/v1/byok', headers: auth })).json().items[0].state, 'active');
});

t.test(
  "chat uses the caller's own key first and charges only the platform fee; revoked keys are never used",
  async (t) => {
    const { app, oa, auth, accountId } = await byokApp(t);
    // Without a key of their own the OpenAI instance is not a candidate.
    const before = (
      await app.inject({
        method: 'POST',
        url: '/v1/ai/chat',
        headers: auth,
        payload: { messages: 'x', prefer: 'cheapest' },
      })
    ).json();
    t.equal(before.metadata.vendor, 'an');
    t.equal(oa.requests.length, 0);

    const k = (
      await app.inject({
        method: 'POST',
        url: '/v1/byok',
        headers: auth,
        payload: { provider: 'openai', alias: 'mine', credentials: { api_key: SECRET } },
      })
    ).json();
    const bal = await app.svc.wallet.balance(accountId);
    const r = (
      await app.inject({
        method: 'POST',
        url: '/v1/ai/chat',
        headers: auth,
        payload: { messages: 'x', prefer: 'smartest' },
      })
    ).json();
    t.match(
      r.metadata,
      { vendor: 'oa', model: 'alpha', byok: true, cost_usd: 0.000005 },
      'BYOK goes first even against prefer'
    );
    t.equal(oa.requests.at(-1)!.headers.authorization, `Bearer ${SECRET}`);
    t.equal(bal - (await app.svc.wallet.balance(accountId)), 5, 'the platform fee, not the vendor price');

    const other = await app.inject({ method: 'POST', url: '/v1/activate', payload: {} });
    const otherAuth = { authorization: `Bearer ${other.json().primary_api_key}` };
    const seen = oa.requests.length;
    t.equal(
      (await app.inject({ method: 'POST', url: '/v1/ai/chat', headers: otherAuth, payload: { messages: 'x' } })).json()
        .metadata.vendor,
      'an',
      "another account never gets this account's key"
    );
    t.equal(oa.requests.length, seen);

    await app.inject({ method: 'DELETE', url: `/v1/byok/${k.byok_id}`, headers: auth });
    const afterRevoke = (
      await app.inject({ method: 'POST', url: '/v1/ai/chat', headers: auth, payload: { messages: 'x' } })
    ).json();
    t.equal(afterRevoke.metadata.vendor, 'an');
    t.equal(afterRevoke.metadata.byok, false);
    t.equal(oa.requests.length, seen);
  }
);

t.test("the operator's markup multiplies vendor prices, never the BYOK platform fee (chat and stream)", async (t) => {
  const { app, auth, accountId } = await aiApp(
    t,
    { wallet: { markup: 2 }, plugins: { byok: { platform_fee_usd: 0.000005 } } },
    { oaKey: '' }
  );
  await app.inject({
    method: 'POST',
    url: '/v1/byok',
    headers: auth,
    payload: { provider: 'openai', alias: 'mine', credentials: { api_key: SECRET } },
  });
  const charged = async (payload: Record<string, unknown>) => {
    const bal = await app.svc.wallet.balance(accountId);
    const res = await app.inject({ method: 'POST', url: '/v1/ai/chat', headers: auth, payload });
    t.equal(res.statusCode, 200, res.body.slice(0, 200));
    return { spent: bal - (await app.svc.wallet.balance(accountId)), res };
  };
  const byok = await charged({ messages: 'x' });
  t.match(byok.res.json().metadata, { vendor: 'oa', byok: true, cost_usd: 0.000005 });
  t.equal(byok.spent, 5, 'the fee as configured, not twice it');
  const streamed = await charged({ messages: 'x', stream: true });
  t.match(streamed.res.body, /"byok":true/);
  t.equal(streamed.spent, 5, 'a stream too');
  // The platform-paid vendor: its price is marked up (twice the catalog price of its usage).
  const paid = await charged({ messages: 'x', vendor: 'an' });
  const m = paid.res.json();
  t.equal(m.metadata.byok, false);
  const u = m.usage;
  t.equal(
    paid.spent,
    2 * Math.ceil((u.input_tokens * 2_000_000 + u.output_tokens * 4_000_000) / 1_000_000),
    'vendor price × markup'
  );
});

t.test('a key the vendor refuses on a call becomes invalid, and its failure cools down nobody else', async (t) => {
  // The OpenAI instance has the operator's key too: account A brings a wrong key of its own.
  const { app, auth, oa } = await aiApp(t, { plugins: { byok: { platform_fee_usd: 0.000005 } } });
  const k = (
    await app.inject({
      method: 'POST',
      url: '/v1/byok',
      headers: auth,
      payload: { provider: 'openai', alias: 'wrong', credentials: { api_key: 'sk-wrong' } },
    })
  ).json();
  const refused = await app.inject({ method: 'POST', url: '/v1/ai/chat', headers: auth, payload: { messages: 'x' } });
  t.equal(oa.requests.at(-1)!.headers.authorization, 'Bearer sk-wrong');
  t.match(refused.json().error?.details?.attempts ?? refused.json().metadata.attempts, [
    { vendor: 'oa', status: 'auth' },
  ]);
  const row = (await app.inject({ method: 'GET', url: '/v1/byok', headers: auth }))
    .json()
    .items.find((r: { byok_id: string }) => r.byok_id === k.byok_id);
  t.equal(row.state, 'invalid', 'marked as a failed test would');
  t.match(row.test_result, { ok: false, error: { code: 'vendor_rejected' } });
  t.notMatch(JSON.stringify(row), /sk-wrong/, 'the secret is not echoed');

  // Another account, platform-paid: the shared instance was not cooled down by A's key.
  const other = await app.inject({ method: 'POST', url: '/v1/activate', payload: {} });
  const otherAuth = { authorization: `Bearer ${other.json().primary_api_key}` };
  const b = (
    await app.inject({
      method: 'POST',
      url: '/v1/ai/chat',
      headers: otherAuth,
      payload: { messages: 'x', prefer: 'cheapest' },
    })
  ).json();
  t.same(
    b.metadata.attempts.map((a: { vendor: string; status: string }) => `${a.vendor}:${a.status}`),
    ['oa:ok']
  );
  t.equal(oa.requests.at(-1)!.headers.authorization, 'Bearer sk-oa');

  // A's next call no longer uses the invalid key.
  const again = (
    await app.inject({
      method: 'POST',
      url: '/v1/ai/chat',
      headers: auth,
      payload: { messages: 'x', prefer: 'cheapest' },
    })
  ).json();
  t.match(again.metadata, { vendor: 'oa', byok: false });
  t.equal(oa.requests.at(-1)!.headers.authorization, 'Bearer sk-oa');
});

t.test('the secret never reaches the log, even at trace level and when the vendor rejects it', async (t) => {
  const fake = await openAiFake({ key: 'sk-very-secret-1234' }).start('/v1');
  t.teardown(() => fake.close());
  const { app, logged } = await traceLoggedApp(t, {
    vendors: [{ id: 'oa', use: 'openai', config: { api_key: '', base_url: fake.url, models: ['gpt-4o-mini'] } }],
  });
  const a = await activate(app);
  for (const secret of ['sk-very-secret-1234', 'sk-wrong-secret-5678']) {
    const k = (
      await app.inject({
        method: 'POST',
        url: '/v1/byok',
        headers: a.auth,
        payload: { provider: 'openai', alias: 'x', credentials: { api_key: secret } },
      })
    ).json();
    await app.inject({ method: 'POST', url: `/v1/byok/${k.byok_id}/test`, headers: a.auth });
    await app.inject({ method: 'POST', url: '/v1/ai/chat', headers: a.auth, payload: { messages: 'hi' } });
    await app.inject({ method: 'DELETE', url: `/v1/byok/${k.byok_id}`, headers: a.auth });
  }
  t.ok(logged().length > 1000, 'the log was written');
  t.notOk(logged().includes('sk-very-secret'), 'the working key is not in the log');
  t.notOk(logged().includes('sk-wrong-secret'), 'the rejected key is not in the log');
});

t.test('a key for one openai-compatible vendor never travels to another', async (t) => {
  const ds = await openAiFake({ key: 'sk-deepseek-own', name: 'fake-deepseek' }).start('/v1');
  const gq = await openAiFake({ name: 'fake-groq' }).start('/v1');
  t.teardown(() => ds.close());
  t.teardown(() => gq.close());
  const { app, auth } = await aiApp(t, {
    vendors: [
      { id: 'deepseek', use: 'openai-compatible', config: { preset: 'deepseek', base_url: ds.url } },
      { id: 'groq', use: 'openai-compatible', config: { preset: 'groq', base_url: gq.url } },
    ],
  });
  const generic = await app.inject({
    method: 'POST',
    url: '/v1/byok',
    headers: auth,
    payload: { provider: 'openai-compatible', alias: 'x', credentials: { api_key: 'k' } },
  });
  t.equal(generic.statusCode, 400, 'the generic adapter is not a provider');
  const k = await app.inject({
    method: 'POST',
    url: '/v1/byok',
    headers: auth,
    payload: { provider: 'deepseek', alias: 'ds', credentials: { api_key: 'sk-deepseek-own' } },
  });
  t.equal(k.statusCode, 200);
  t.equal(
    (await app.inject({ method: 'POST', url: `/v1/byok/${k.json().byok_id}/test`, headers: auth })).json().ok,
    true
  );
  const r = (
    await app.inject({ method: 'POST', url: '/v1/ai/chat', headers: auth, payload: { messages: 'x' } })
  ).json();
  t.match(r.metadata, { vendor: 'deepseek', model: 'deepseek-chat', byok: true });
  t.equal(r.content, 'Hello from fake-deepseek.');
  const pinned = await app.inject({
    method: 'POST',
    url: '/v1/ai/chat',
    headers: auth,
    payload: { messages: 'x', vendor: 'groq' },
  });
  t.equal(pinned.statusCode, 503, 'groq has no key of its own and the caller registered none for it');
  t.equal(gq.requests.length, 0, 'the deepseek key never reached groq');
});
