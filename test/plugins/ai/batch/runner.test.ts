import t from 'tap';
import { sleep } from '../../../helpers/wait.js';
import { BATCH_MODELS, batchApp, eventually, holds, runningBatch, submit, until, type Ctx } from './setup.js';

// Polls a minute apart: the queued poll job waits for the test to make it due (lastAttempt). With
// 400 ms the engine sometimes claimed it first on a loaded machine, and the test found no job.
const SLOW = { jobs: { poll_ms: 20 }, plugins: { ai: { models: BATCH_MODELS, batch_poll_ms: 60_000 } } };

/** Make the waiting poll job of the (only) batch due now, with `maxAttempts` attempts in all. */
async function lastAttempt(c: Ctx, maxAttempts: number): Promise<void> {
  const r = await c.app.svc.db
    .updateTable('jobs')
    .set({ run_at: Date.now(), max_attempts: maxAttempts })
    .where('kind', '=', 'ai.batch')
    .where('state', '=', 'queued')
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) !== 1) throw new Error('no waiting poll job');
  c.app.svc.jobs.wake('ai.batch');
}

t.test(
  "the poll's attempts run out: the batch fails, its hold comes back, and the vendor batch is cancelled",
  async (t) => {
    const c = await batchApp(t, SLOW);
    c.oa.batches.pollsUntilDone = 1000;
    const { batch_id, vendorId, before } = await runningBatch(c, { messages: 'x', model: 'alpha', max_tokens: 100 });
    c.oa.batches.pollStatus = 500;
    await lastAttempt(c, 1);
    const done = await until(c, batch_id, ['failed', 'succeeded', 'canceled']);
    t.equal(done.state, 'failed');
    t.match(done.error, { code: 'vendor_error' });
    await eventually(() => c.oa.batches.canceled.length > 0);
    t.same(c.oa.batches.canceled, [vendorId], 'POST /batches/{id}/cancel');
    t.equal(c.oa.batches.batches.get(vendorId)!.status, 'cancelling');
    t.equal(await c.app.svc.wallet.balance(c.accountId), before);
    t.same(await holds(c), []);
  }
);

t.test(
  'a poll job that died with its node (failBatch): the batch fails and the Anthropic batch is canceled',
  async (t) => {
    const c = await batchApp(t, SLOW);
    c.an.batches.pollsUntilDone = 1000;
    const { batch_id, vendorId, before } = await runningBatch(c, { messages: 'x', model: 'beta', max_tokens: 50 });
    // Claimed once more than it may be: the engine buries it and calls onExhausted, as after a crash.
    await lastAttempt(c, 0);
    const done = await until(c, batch_id, ['failed', 'succeeded', 'canceled']);
    t.equal(done.state, 'failed');
    t.match(done.error, { code: 'internal_error' });
    await eventually(() => c.an.batches.canceled.length > 0);
    t.same(c.an.batches.canceled, [vendorId]);
    t.equal(c.an.batches.batches.get(vendorId)!.wire.processing_status, 'canceling');
    t.equal(await c.app.svc.wallet.balance(c.accountId), before);
  }
);

t.test('a batch the vendor itself failed is not cancelled there', async (t) => {
  const c = await batchApp(t);
  c.oa.batches.outcome = 'failed';
  const { batch_id } = (await submit(c, { messages: 'x', model: 'alpha' })).json();
  t.equal((await until(c, batch_id, ['failed', 'succeeded'])).state, 'failed');
  await sleep(100);
  t.same(c.oa.batches.canceled, []);
});

t.test('canceled while its submit was out: the vendor batch created after the cancel is cancelled too', async (t) => {
  const c = await batchApp(t);
  const before = await c.app.svc.wallet.balance(c.accountId);
  c.oa.next({ delayMs: 300 });
  const { batch_id } = (await submit(c, { messages: 'x', model: 'alpha' })).json();
  await eventually(() => c.oa.requests.some((r) => r.path === '/v1/files'));
  const res = await c.app.inject({ method: 'POST', url: `/v1/ai/batches/${batch_id}/cancel`, headers: c.auth });
  t.equal(res.json().state, 'canceled', res.body);
  await eventually(() => c.oa.batches.canceled.length > 0);
  t.equal(c.oa.batches.batches.size, 1, 'the submit went through after the cancel');
  t.same(c.oa.batches.canceled, [...c.oa.batches.batches.keys()], 'the one vendor batch, cancelled');
  t.equal((await until(c, batch_id, ['canceled', 'running'])).state, 'canceled');
  t.equal(await c.app.svc.wallet.balance(c.accountId), before);
});
