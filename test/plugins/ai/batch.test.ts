import t from 'tap';
import { aiApp } from './setup.js';
import { FAST, batchApp, holds, settled, submit, until, type Ctx } from './batch/setup.js';
import { activate, makeApp } from '../../helpers/app.js';
import { loadConfig } from '../../../config/load.js';
import { buildApp } from '../../../core/app.js';
import { openAiFake } from '../../fakes/openai-fake.js';

t.test('OpenAI Batch API: 202, JSONL upload, polls until succeeded, charged exactly at the batch price', async (t) => {
  const c = await batchApp(t);
  c.oa.batches.pollsUntilDone = 2;
  const before = await c.app.svc.wallet.balance(c.accountId);
  const res = await submit(c, { messages: 'Summarise this', model: 'alpha', max_tokens: 100 });
  t.equal(res.statusCode, 202, res.body);
  const { batch_id, state } = res.json();
  t.match(batch_id, /^batch_/);
  t.equal(state, 'queued');
  t.same(Object.keys(res.json()).sort(), ['batch_id', 'state']);
  // Reserved at submit: an upper bound of the input (bytes) and the 100 output tokens at batch prices.
  t.ok(before - (await c.app.svc.wallet.balance(c.accountId)) >= 100, 'the estimate is held');
  const done = await until(c, batch_id, ['succeeded', 'failed']);
  t.equal(done.state, 'succeeded', JSON.stringify(done));
  await settled(c);
  t.equal(done.result.content, 'Hello from a batch.');
  t.same(done.result.usage, { input_tokens: 12, output_tokens: 4, total_tokens: 16 });
  // 12 input tokens at 0.5 USD/M + 4 output at 1 USD/M = 6 + 4 = 10 micro-USD.
  t.match(done.result.metadata, {
    vendor: 'oa',
    model: 'alpha',
    cost_usd: 0.00001,
    cached: false,
    byok: false,
    attempts: [{ vendor: 'oa', model: 'alpha', status: 'ok' }],
  });
  t.match(done.completed_at, /Z$/);
  t.equal(before - (await c.app.svc.wallet.balance(c.accountId)), 10, 'exactly the batch price');
  t.same(await holds(c), [], 'the hold is settled');
  const ledger = await c.app.svc.db
    .selectFrom('wallet_ledger')
    .selectAll()
    .where('account_id', '=', c.accountId)
    .where('kind', '=', 'usage')
    .execute();
  t.match(ledger, [{ amount_micros: -10, capability: 'ai.chat.batch', vendor: 'oa', ref: batch_id }]);

  const [fileId] = [...c.oa.batches.files.keys()];
  const line = JSON.parse(c.oa.batches.files.get(fileId)!.content);
  t.match(line, {
    custom_id: batch_id,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model: 'alpha', messages: [{ role: 'user', content: 'Summarise this' }], max_completion_tokens: 100 },
  });
  const upload = c.oa.requests.find((r) => r.path === '/v1/files')!;
  t.match(upload.headers['content-type'], /^multipart\/form-data; boundary=/);
  const created = c.oa.requests.find((r) => r.path === '/v1/batches')!;
  t.match(created.body, { input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' });
  t.ok(
    c.oa.requests.filter((r) => r.method === 'GET' && r.path.startsWith('/v1/batches/')).length >= 3,
    'polled until done'
  );
  t.equal(c.oa.requests.filter((r) => r.path === '/v1/chat/completions').length, 0, 'no direct chat call');
});

t.test('Anthropic Message Batches: submitted, results read from results_url, charged at the batch price', async (t) => {
  const c = await batchApp(t);
  const before = await c.app.svc.wallet.balance(c.accountId);
  const { batch_id } = (
    await submit(c, {
      messages: [
        { role: 'system', content: 'Be brief' },
        { role: 'user', content: 'Hi' },
      ],
      model: 'beta',
      max_tokens: 50,
    })
  ).json();
  const done = await until(c, batch_id, ['succeeded', 'failed']);
  t.equal(done.state, 'succeeded', JSON.stringify(done));
  await settled(c);
  t.equal(done.result.content, 'Hello from an Anthropic batch.');
  t.same(done.result.usage, { input_tokens: 14, output_tokens: 5, total_tokens: 19 });
  // 14 at 1 USD/M + 5 at 2 USD/M = 24 micro-USD.
  t.equal(before - (await c.app.svc.wallet.balance(c.accountId)), 24);
  t.equal(done.result.metadata.cost_usd, 0.000024);
  const create = c.an.requests.find((r) => r.method === 'POST' && r.path === '/v1/messages/batches')!;
  t.match(create.body, {
    requests: [
      {
        custom_id: batch_id,
        params: {
          model: 'beta',
          max_tokens: 50,
          messages: [{ role: 'user' }],
          system: [{ type: 'text', text: 'Be brief' }],
        },
      },
    ],
  });
  t.notOk(create.body.requests[0].params.stream);
  t.ok(
    c.an.requests.some((r) => r.path.endsWith('/results')),
    'results read from results_url'
  );
  t.same(await holds(c), []);
});

t.test("Anthropic Message Batches with a JSON mode: the answer tool's input is the result's content", async (t) => {
  const c = await batchApp(t);
  const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
  const { batch_id } = (
    await submit(c, {
      messages: 'Where?',
      model: 'beta',
      response_format: { type: 'json_schema', json_schema: { name: 'place', schema } },
    })
  ).json();
  const done = await until(c, batch_id, ['succeeded', 'failed']);
  t.equal(done.state, 'succeeded', JSON.stringify(done));
  t.same(
    { content: JSON.parse(done.result.content), finish: done.result.finish_reason, calls: done.result.tool_calls },
    { content: { city: 'text' }, finish: 'stop', calls: undefined }
  );
  const create = c.an.requests.find((r) => r.method === 'POST' && r.path === '/v1/messages/batches')!;
  t.match(create.body.requests[0].params, {
    tools: [{ name: 'place', input_schema: schema }],
    tool_choice: { type: 'tool', name: 'place' },
  });
  await settled(c);
});

t.test("a vendor without a batch API: the call runs later from a job, at the model's batch price", async (t) => {
  const c = await batchApp(t);
  const { app } = await aiApp(t, {
    ...FAST,
    vendors: [
      { id: 'oc', use: 'openai-compatible', config: { api_key: 'sk-oa', base_url: c.oa.url, models: ['gamma'] } },
    ],
  });
  const a = await activate(app);
  const d = { ...c, app, auth: a.auth, accountId: a.account_id };
  const before = await app.svc.wallet.balance(a.account_id);
  const res = await submit(d, { messages: 'Hi', model: 'gamma' });
  t.equal(res.statusCode, 202, res.body);
  const done = await until(d, res.json().batch_id, ['succeeded', 'failed']);
  t.equal(done.state, 'succeeded', JSON.stringify(done));
  await settled(d);
  t.equal(done.result.content, 'Hello from fake-openai.');
  // 12 at 2 USD/M + 3 at 4 USD/M = 36 micro-USD (the normal price would be 72).
  t.equal(before - (await app.svc.wallet.balance(a.account_id)), 36);
  t.equal(done.result.metadata.vendor, 'oc');
  t.equal(c.oa.batches.batches.size, 0, 'no vendor batch');
});

t.test("vendor batch failures: failed state with the vendor's reason, the reservation released", async (t) => {
  const c = await batchApp(t);
  const before = await c.app.svc.wallet.balance(c.accountId);
  for (const [outcome, message] of [
    ['failed', /does not support batch/],
    ['expired', /expired without an answer/],
    ['request_error', /Invalid value for messages/],
  ] as const) {
    c.oa.batches.outcome = outcome;
    const { batch_id } = (await submit(c, { messages: 'x', model: 'alpha' })).json();
    const done = await until(c, batch_id, ['succeeded', 'failed']);
    t.equal(done.state, 'failed', outcome);
    t.match(done.error, { code: 'vendor_error', message }, outcome);
    t.notOk(done.result);
  }
  c.an.batches.outcome = 'errored';
  const { batch_id } = (await submit(c, { messages: 'x', model: 'beta' })).json();
  t.match((await until(c, batch_id, ['succeeded', 'failed'])).error, { code: 'vendor_error', message: /max_tokens/ });
  // The submit itself fails at every candidate: failed too, nothing kept.
  c.oa.next({ status: 500 });
  const rejected = (await submit(c, { messages: 'x', model: 'alpha' })).json();
  t.match((await until(c, rejected.batch_id, ['succeeded', 'failed'])).error, { code: 'vendor_error' });
  await settled(c);
  t.equal(await c.app.svc.wallet.balance(c.accountId), before, 'every reservation given back');
  t.same(await holds(c), []);
});

t.test("another account's batch is 404; bad input changes nothing; idempotency replays the 202", async (t) => {
  const c = await batchApp(t);
  const { batch_id } = (await submit(c, { messages: 'x', model: 'alpha' })).json();
  const other = await activate(c.app);
  for (const id of [batch_id, 'batch_nope']) {
    const r = await c.app.inject({ method: 'GET', url: `/v1/ai/batches/${id}`, headers: other.auth });
    t.equal(r.statusCode, 404);
    t.equal(r.json().error.code, 'not_found');
  }
  await until(c, batch_id, ['succeeded']);
  await settled(c);

  const before = await c.app.svc.wallet.balance(c.accountId);
  const rows = async () => (await c.app.svc.db.selectFrom('ai_batches').select('batch_id').execute()).length;
  const count = await rows();
  const calls = c.oa.requests.length;
  for (const payload of [
    { messages: 'x', stream: true },
    { messages: 'x', nope: 1 },
    { messages: [] },
    { messages: 'x', model: 'gpt-9' },
  ]) {
    const r = await submit(c, payload);
    t.ok([400, 503].includes(r.statusCode), `${JSON.stringify(payload)} -> ${r.statusCode}`);
    if ('stream' in payload) t.match(r.json().error, { code: 'validation_failed', param: 'batch_mode' });
  }
  t.equal(await rows(), count, 'no batch row');
  t.equal(await c.app.svc.wallet.balance(c.accountId), before, 'nothing held or charged');
  t.equal(c.oa.requests.length, calls, 'no vendor called');

  const once = await submit(c, { messages: 'again', model: 'alpha', idempotency_key: 'b-1' });
  const twice = await submit(c, { messages: 'again', model: 'alpha', idempotency_key: 'b-1' });
  t.equal(twice.statusCode, 202);
  t.equal(twice.headers['idempotent-replayed'], 'true');
  t.equal(twice.json().batch_id, once.json().batch_id);
  t.equal(await rows(), count + 1, 'one batch');
  await until(c, once.json().batch_id, ['succeeded']);
  t.equal(c.oa.batches.batches.size, 2, 'one vendor batch per submit');
});

t.test('a failed poll is retried, and a restarted gateway finishes the batch and charges it once', async (t) => {
  const oa = await openAiFake({ key: 'sk-oa' }).start('/v1');
  t.teardown(() => oa.close());
  const { app, config } = await makeApp(t, {
    ...FAST,
    vendors: [{ id: 'oa', use: 'openai', config: { api_key: 'sk-oa', base_url: oa.url, models: ['alpha'] } }],
  });
  const a = await activate(app);
  const d = { app, oa, an: oa, key: a.key, auth: a.auth, accountId: a.account_id } as unknown as Ctx;
  const before = await app.svc.wallet.balance(a.account_id);
  oa.batches.pollsUntilDone = 1000;
  const { batch_id } = (await submit(d, { messages: 'x', model: 'alpha', max_tokens: 10 })).json();
  await until(d, batch_id, ['running']);
  const polls = () => oa.requests.filter((r) => r.path.startsWith('/v1/batches/')).length;
  const seen = polls();
  oa.next({ status: 500 });
  for (let i = 0; i < 200 && polls() < seen + 2; i++) await new Promise((ok) => setTimeout(ok, 10));
  t.equal(
    (await until(d, batch_id, ['running', 'failed'])).state,
    'running',
    'a poll that failed does not fail the batch'
  );
  await app.close();

  oa.batches.pollsUntilDone = 0;
  const next = await buildApp(loadConfig({ object: config as unknown as Record<string, unknown>, env: {} }));
  t.teardown(() => next.close());
  await next.ready();
  const e = { ...d, app: next };
  const done = await until(e, batch_id, ['succeeded', 'failed']);
  t.equal(done.state, 'succeeded', JSON.stringify(done));
  await settled(e);
  // 12 input at 0.5 USD/M + 4 output at 1 USD/M.
  t.equal(before - (await next.svc.wallet.balance(a.account_id)), 10, 'charged once, at the batch price');
  t.equal(oa.batches.batches.size, 1, 'submitted once');
});

t.test(
  "BYOK: the batch runs on the caller's key, costs the platform fee, and the key is not stored with it",
  async (t) => {
    const c = await batchApp(t);
    const reg = await c.app.inject({
      method: 'POST',
      url: '/v1/byok',
      headers: c.auth,
      payload: { provider: 'anthropic', alias: 'mine', credentials: { api_key: 'sk-an' } },
    });
    t.equal(reg.statusCode, 200, reg.body);
    const before = await c.app.svc.wallet.balance(c.accountId);
    const { batch_id } = (await submit(c, { messages: 'x', model: 'beta' })).json();
    const row = await c.app.svc.db
      .selectFrom('ai_batches')
      .selectAll()
      .where('batch_id', '=', batch_id)
      .executeTakeFirstOrThrow();
    t.notOk(JSON.stringify(row).includes('sk-an'), 'no key in the batch row');
    const done = await until(c, batch_id, ['succeeded', 'failed']);
    t.equal(done.state, 'succeeded', JSON.stringify(done));
    await settled(c);
    t.equal(done.result.metadata.byok, true);
    t.equal(before - (await c.app.svc.wallet.balance(c.accountId)), 100, 'the BYOK platform fee (0.0001 USD)');
  }
);
