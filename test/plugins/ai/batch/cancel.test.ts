import t from 'tap';
import { activate, makeApp } from '../../../helpers/app.js';
import { openAiFake } from '../../../fakes/openai-fake.js';
import { anthropicFake } from '../../../fakes/anthropic-fake.js';
import { sleep, until as waitFor } from '../../../helpers/wait.js';
import { failStoringAnswers } from '../../../helpers/answer-fault.js';
import { FAST, batchApp, holds, runningBatch, settled, submit, until, type Ctx } from './setup.js';

const cancel = (c: Ctx, id: string, opts: { headers?: Record<string, string>; payload?: unknown } = {}) =>
  c.app.inject({
    method: 'POST',
    url: `/v1/ai/batches/${id}/cancel`,
    headers: { ...c.auth, ...opts.headers },
    ...(opts.payload ? { payload: opts.payload } : {}),
  });

const usage = (c: Ctx) =>
  c.app.svc.db
    .selectFrom('wallet_ledger')
    .selectAll()
    .where('account_id', '=', c.accountId)
    .where('kind', '=', 'usage')
    .execute();

t.test(
  'cancel a queued batch (background call): canceled, the hold back in full, and the job makes no call',
  async (t) => {
    const oa = await openAiFake({ key: 'sk-oa' }).start('/v1');
    t.teardown(() => oa.close());
    const { app } = await makeApp(t, {
      ...FAST,
      vendors: [
        { id: 'oc', use: 'openai-compatible', config: { api_key: 'sk-oa', base_url: oa.url, models: ['gamma'] } },
      ],
    });
    const a = await activate(app);
    const c = { app, oa, an: oa, key: a.key, auth: a.auth, accountId: a.account_id } as unknown as Ctx;
    // Stopped, so the batch stays queued until the cancel has been made.
    await app.svc.jobs.stop();
    const before = await app.svc.wallet.balance(a.account_id);
    const { batch_id } = (await submit(c, { messages: 'Hi', model: 'gamma', max_tokens: 100 })).json();
    t.ok(before - (await app.svc.wallet.balance(a.account_id)) > 0, 'held at submit');
    const res = await cancel(c, batch_id);
    t.equal(res.statusCode, 200, res.body);
    t.match(res.json(), { batch_id, state: 'canceled', completed_at: /Z$/ });
    t.notOk(res.json().result);
    t.notOk(res.json().error);
    t.equal(await app.svc.wallet.balance(a.account_id), before, 'the balance is back exactly');
    t.same(await holds(c), []);

    app.svc.jobs.start();
    for (let i = 0; i < 200; i++) {
      const job = await app.svc.db.selectFrom('jobs').select('state').where('kind', '=', 'ai.batch').executeTakeFirst();
      if (!job || job.state === 'done') break;
      await sleep(10);
    }
    t.equal(
      (await until(c, batch_id, ['canceled', 'running', 'succeeded'])).state,
      'canceled',
      'the job found it canceled'
    );
    t.equal(oa.requests.filter((r) => r.path === '/v1/chat/completions').length, 0, 'no chat call');
    t.equal(await app.svc.wallet.balance(a.account_id), before, 'nothing charged');
  }
);

t.test('cancel a running OpenAI batch: the vendor is asked, a poll answering late charges nothing', async (t) => {
  const c = await batchApp(t);
  c.oa.batches.pollsUntilDone = 1000;
  const { batch_id, vendorId, before } = await runningBatch(c, { messages: 'x', model: 'alpha', max_tokens: 100 });
  const res = await cancel(c, batch_id);
  t.equal(res.statusCode, 200, res.body);
  t.equal(res.json().state, 'canceled');
  t.same(c.oa.batches.canceled, [vendorId], 'POST /batches/{id}/cancel for the vendor batch');
  // The fake moves a cancelling batch to cancelled on a later read: either says the vendor was told.
  t.match(c.oa.batches.batches.get(vendorId)!.status, /^(cancelling|cancelled)$/);
  t.ok(
    c.oa.requests.some(
      (r) =>
        r.method === 'POST' && r.path === `/v1/batches/${vendorId}/cancel` && r.headers.authorization === 'Bearer sk-oa'
    )
  );
  t.equal(await c.app.svc.wallet.balance(c.accountId), before, 'the balance is back exactly');
  t.same(await holds(c), []);

  // Polls after the cancel (the vendor would now say done) change nothing.
  c.oa.batches.pollsUntilDone = 0;
  await sleep(150);
  const after = (await c.app.inject({ method: 'GET', url: `/v1/ai/batches/${batch_id}`, headers: c.auth })).json();
  t.same(after, res.json(), 'the record is as the cancel left it');
  t.equal(await c.app.svc.wallet.balance(c.accountId), before);
  t.same(await usage(c), []);

  // Twice: 409 invalid_state, and nothing is asked or moved again.
  const again = await cancel(c, batch_id);
  t.equal(again.statusCode, 409);
  t.match(again.json().error, { code: 'invalid_state', param: 'id', message: /is canceled/ });
  t.same(c.oa.batches.canceled, [vendorId]);
  t.equal(await c.app.svc.wallet.balance(c.accountId), before);
});

t.test(
  'a poll in flight when the cancel lands, and a vendor that refuses the cancel: canceled all the same, never charged',
  async (t) => {
    const c = await batchApp(t);
    c.oa.batches.pollsUntilDone = 1000;
    const before = await c.app.svc.wallet.balance(c.accountId);
    const { batch_id } = (await submit(c, { messages: 'x', model: 'alpha', max_tokens: 100 })).json();
    await until(c, batch_id, ['running']);
    const polls = () => c.oa.requests.filter((r) => r.method === 'GET' && r.path.startsWith('/v1/batches/')).length;
    const seen = polls();
    // The next poll is held 300 ms and then finds the batch completed; the cancel POST gets a 500.
    c.oa.batches.pollsUntilDone = 0;
    c.oa.next({ delayMs: 300 }, { status: 500 });
    await waitFor('the next poll', () => polls() !== seen);
    const res = await cancel(c, batch_id);
    t.equal(res.statusCode, 200, res.body);
    t.equal(res.json().state, 'canceled');
    t.equal(c.oa.batches.canceled.length, 0, 'the cancel never reached the batch (500)');
    await sleep(450);
    t.equal((await until(c, batch_id, ['canceled', 'succeeded'])).state, 'canceled', 'the late answer did not move it');
    t.equal(await c.app.svc.wallet.balance(c.accountId), before, 'nothing charged');
    t.same(await usage(c), []);
  }
);

t.test(
  'a vendor down when the cancel lands is asked again until it cancels; a vendor that refuses it (4xx) is not',
  async (t) => {
    const c = await batchApp(t);
    c.oa.batches.pollsUntilDone = 1000;
    const { batch_id, vendorId } = await runningBatch(c, { messages: 'x', model: 'alpha', max_tokens: 100 });
    const cancels = () =>
      c.oa.requests.filter((r) => r.method === 'POST' && r.path === `/v1/batches/${vendorId}/cancel`).length;
    // The cancel's first two tries get a 500 (the router tries the instance once a call); the
    // batch's polls, which go on meanwhile, are not scripted.
    const cancelPath = /\/batches\/[^/]+\/cancel$/;
    c.oa.next({ status: 500, path: cancelPath }, { status: 500, path: cancelPath });
    const res = await cancel(c, batch_id);
    t.equal(res.json().state, 'canceled', 'canceled for the caller at once');
    t.equal(c.oa.batches.canceled.length, 0);
    // The job's first retry comes after the poll interval, the next after the engine's backoff (0.5–1 s).
    await waitFor('the retry job to cancel at the vendor', () => c.oa.batches.canceled.length > 0);
    t.same(c.oa.batches.canceled, [vendorId], 'the retry job canceled it at the vendor');
    t.ok(cancels() >= 3, `asked ${cancels()} times`);
    const jobs = await c.app.svc.db
      .selectFrom('jobs')
      .select(['kind', 'state'])
      .where('kind', '=', 'ai.batch.vendor-cancel')
      .execute();
    t.equal(jobs.length, 1, 'one retry job for the vendor batch');

    const second = await runningBatch(c, { messages: 'y', model: 'alpha', max_tokens: 100 });
    c.oa.next({ status: 400, path: cancelPath });
    t.equal((await cancel(c, second.batch_id)).json().state, 'canceled');
    await sleep(200);
    t.equal(
      c.oa.requests.filter((r) => r.method === 'POST' && r.path === `/v1/batches/${second.vendorId}/cancel`).length,
      1,
      'a refusal is not asked again'
    );
  }
);

t.test(
  'cancel a running Anthropic batch; a finished batch is 409; another account and unknown ids are 404',
  async (t) => {
    const c = await batchApp(t);
    c.an.batches.pollsUntilDone = 1000;
    const { batch_id, vendorId, before } = await runningBatch(c, { messages: 'x', model: 'beta', max_tokens: 50 });

    const other = await activate(c.app);
    for (const id of [batch_id, 'batch_nope']) {
      const r = await cancel(c, id, { headers: other.auth });
      t.equal(r.statusCode, 404);
      t.match(r.json().error, { code: 'not_found', param: 'id' });
    }
    t.equal((await until(c, batch_id, ['running', 'canceled'])).state, 'running', 'another account cannot cancel it');

    const res = await cancel(c, batch_id);
    t.equal(res.statusCode, 200, res.body);
    t.equal(res.json().state, 'canceled');
    t.same(c.an.batches.canceled, [vendorId]);
    const asked = c.an.requests.find(
      (r) => r.method === 'POST' && r.path === `/v1/messages/batches/${vendorId}/cancel`
    )!;
    t.equal(asked.headers['anthropic-version'], '2023-06-01');
    t.equal(c.an.batches.batches.get(vendorId)!.wire.processing_status, 'canceling');
    t.equal(await c.app.svc.wallet.balance(c.accountId), before, 'the balance is back exactly');
    t.same(await holds(c), []);

    c.an.batches.pollsUntilDone = 0;
    const { batch_id: done } = (await submit(c, { messages: 'y', model: 'beta' })).json();
    await until(c, done, ['succeeded']);
    await settled(c);
    const spent = await c.app.svc.wallet.balance(c.accountId);
    const r = await cancel(c, done);
    t.equal(r.statusCode, 409);
    t.match(r.json().error, { code: 'invalid_state', details: { state: 'succeeded' } });
    t.equal(
      (await until(c, done, ['succeeded'])).result.content,
      'Hello from an Anthropic batch.',
      'the result is kept'
    );
    t.equal(await c.app.svc.wallet.balance(c.accountId), spent);
    t.same(c.an.batches.canceled, [vendorId], 'the vendor is not asked about a finished batch');
  }
);

t.test(
  'cancel: idempotency key replays the answer; an unknown body field is 400; a key without the ai scope is 403',
  async (t) => {
    const c = await batchApp(t);
    await c.app.svc.jobs.stop();
    const { batch_id } = (await submit(c, { messages: 'x', model: 'alpha' })).json();
    const bad = await cancel(c, batch_id, { payload: { nope: 1 } });
    t.equal(bad.statusCode, 400);
    t.equal((await until(c, batch_id, ['queued', 'canceled'])).state, 'queued', 'bad input changes nothing');

    const once = await cancel(c, batch_id, { headers: { 'idempotency-key': 'c-1' } });
    const twice = await cancel(c, batch_id, { headers: { 'idempotency-key': 'c-1' } });
    t.equal(once.statusCode, 200, once.body);
    t.equal(twice.statusCode, 200);
    t.equal(twice.headers['idempotent-replayed'], 'true');
    t.same(twice.json(), once.json());
    t.equal(
      (await cancel(c, batch_id, { payload: { idempotency_key: 'c-2' } })).statusCode,
      409,
      'a new key is a new cancel'
    );

    const key = await c.app.inject({
      method: 'POST',
      url: '/v1/account/keys',
      headers: c.auth,
      payload: { label: 'storage only', scopes: ['storage'] },
    });
    t.equal(key.statusCode, 200, key.body);
    const { batch_id: other } = (await submit(c, { messages: 'y', model: 'alpha' })).json();
    const r = await cancel(c, other, { headers: { authorization: `Bearer ${key.json().secret}` } });
    t.equal(r.statusCode, 403);
    t.equal((await until(c, other, ['queued', 'canceled'])).state, 'queued');
  }
);

t.test("BYOK: the vendor cancel goes out with the caller's key", async (t) => {
  const an = await anthropicFake({ key: 'sk-mine' }).start();
  t.teardown(() => an.close());
  // No operator key: the instance serves only callers who bring theirs.
  const { app } = await makeApp(t, {
    ...FAST,
    vendors: [{ id: 'an', use: 'anthropic', config: { api_key: '', base_url: an.url, models: ['beta'] } }],
  });
  const a = await activate(app);
  const c = { app, oa: an, an, key: a.key, auth: a.auth, accountId: a.account_id } as unknown as Ctx;
  const reg = await app.inject({
    method: 'POST',
    url: '/v1/byok',
    headers: a.auth,
    payload: { provider: 'anthropic', alias: 'mine', credentials: { api_key: 'sk-mine' } },
  });
  t.equal(reg.statusCode, 200, reg.body);
  an.batches.pollsUntilDone = 1000;
  const { batch_id, vendorId } = await runningBatch(c, { messages: 'x', model: 'beta' });
  t.equal((await cancel(c, batch_id)).json().state, 'canceled');
  t.same(an.batches.canceled, [vendorId], "accepted with the caller's key");
  t.equal(an.requests.find((r) => r.path.endsWith('/cancel'))!.headers['x-api-key'], 'sk-mine');
});

t.test('cancel exactly once: with its answer, against another cancel, against the answer', async (t) => {
  const c = await batchApp(t);
  const state = async (id: string) =>
    (await c.app.svc.db.selectFrom('ai_batches').select('state').where('batch_id', '=', id).executeTakeFirstOrThrow())
      .state;

  await t.test('the answer cannot be stored: the batch and its hold stay; the retry cancels once', async (t) => {
    await c.app.svc.jobs.stop();
    t.teardown(() => c.app.svc.jobs.start());
    const before = await c.app.svc.wallet.balance(c.accountId);
    const { batch_id } = (await submit(c, { messages: 'x', model: 'alpha', max_tokens: 100 })).json();
    const held = await c.app.svc.wallet.balance(c.accountId);
    const undo = await failStoringAnswers(c.app);
    const failed = await cancel(c, batch_id, { headers: { 'idempotency-key': 'cx-1' } });
    await undo();
    t.equal(failed.statusCode, 500, failed.body);
    t.equal(await state(batch_id), 'queued', 'the move rolled back with the answer');
    t.equal(await c.app.svc.wallet.balance(c.accountId), held, 'the hold is still held');
    const res = await cancel(c, batch_id, { headers: { 'idempotency-key': 'cx-1' } });
    t.equal(res.statusCode, 200, res.body);
    t.equal(res.json().state, 'canceled');
    const again = await cancel(c, batch_id, { headers: { 'idempotency-key': 'cx-1' } });
    t.equal(again.headers['idempotent-replayed'], 'true');
    t.same(again.json(), res.json());
    t.equal(await c.app.svc.wallet.balance(c.accountId), before, 'given back once');
  });

  await t.test('two concurrent cancels: one moves the batch and gives its hold back once', async (t) => {
    c.oa.batches.pollsUntilDone = 1000;
    const { batch_id, before } = await runningBatch(c, { messages: 'x', model: 'alpha', max_tokens: 100 });
    const answers = await Promise.all([
      cancel(c, batch_id),
      cancel(c, batch_id, { headers: { 'idempotency-key': 'cy-1' } }),
    ]);
    t.same(answers.map((r) => r.statusCode).sort(), [200, 409], answers.map((r) => r.body).join('\n'));
    t.equal(await state(batch_id), 'canceled');
    t.equal(await c.app.svc.wallet.balance(c.accountId), before, 'the balance is back exactly');
    t.same(await holds(c), []);
  });

  await t.test('a cancel racing the answer: either canceled and free, or succeeded and charged once', async (t) => {
    const spent = await usage(c);
    const { batch_id, before } = await runningBatch(c, { messages: 'x', model: 'alpha', max_tokens: 100 });
    const polls = () => c.oa.requests.filter((r) => r.method === 'GET' && r.path.startsWith('/v1/batches/')).length;
    const seen = polls();
    c.oa.batches.pollsUntilDone = 0;
    c.oa.next({ delayMs: 100 });
    await waitFor('the next poll', () => polls() !== seen);
    await sleep(100); // no threshold: the outcome is checked whichever way the race went
    const res = await cancel(c, batch_id);
    const final = await until(c, batch_id, ['canceled', 'succeeded']);
    await settled(c);
    t.comment(`the race went to ${final.state}`);
    const charged = (await usage(c)).slice(spent.length);
    if (final.state === 'canceled') {
      t.equal(res.statusCode, 200, res.body);
      t.same(charged, [], 'nothing charged');
      t.equal(await c.app.svc.wallet.balance(c.accountId), before);
    } else {
      t.equal(res.statusCode, 409, res.body);
      t.equal(charged.length, 1, 'charged once');
      const cost = Math.round(final.result.metadata.cost_usd * 1e6);
      t.equal(await c.app.svc.wallet.balance(c.accountId), before - cost, 'what the result says');
    }
    t.same(await holds(c), []);
  });
});
