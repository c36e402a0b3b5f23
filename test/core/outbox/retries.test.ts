import t from 'tap';
import type { FastifyInstance } from 'fastify';
import { count, leaveAttemptOpen, outboxApp, record, send, untilState } from './outbox-app.js';
import { fake } from '../../helpers/outbox-vendor.js';
import { shiftedClock } from '../../helpers/clock.js';
import { until } from '../../helpers/wait.js';

// Retries only where the vendor did not act; a crash between the call and its outcome resends
// only to a vendor that honours idempotency keys. The test area backs off 60 s × n: a shifted
// clock passes it, and the engine is woken to look.

const KIND = 'outbox.send.testmsg';

async function jobRow(app: FastifyInstance, id: string) {
  return app.svc.db.selectFrom('jobs').selectAll().where('job_id', '=', id).executeTakeFirstOrThrow();
}

/** Wait until the record's job is waiting for a retry, then move the clock past it and wake the engine. */
async function passBackoff(app: FastifyInstance, clock: { advance(ms: number): void }, id: string, attempts: number) {
  await until(`attempt ${attempts} of ${id} to fail`, async () => {
    const j = await jobRow(app, id);
    return j.state === 'queued' && Number(j.attempts) === attempts;
  });
  const j = await jobRow(app, id);
  clock.advance(Number(j.run_at) - Date.now() + 1);
  app.svc.jobs.wake(KIND);
}

t.test('a not-sent failure is retried with backoff, with the same idempotency key', async (t) => {
  const clock = shiftedClock(t);
  const { app, a } = await outboxApp(t);
  fake('fake1').modes.push('not_sent', 'rate_limited');
  const before = await app.svc.wallet.balance(a.account_id);
  const id = (await send(app, a, { to: 'bob' })).json().message_id;
  await passBackoff(app, clock, id, 1);
  const between = await record(app, a, id);
  t.equal(between.state, 'queued', 'still queued between attempts');
  t.equal(between.error.code, 'vendor_error');
  await passBackoff(app, clock, id, 2);
  // The job is marked done in the transaction that makes the record sent, not in a commit after it.
  const store = app.svc.jobs.store;
  const complete = store.complete.bind(store);
  const completions: boolean[] = [];
  store.complete = (jobId, owner, now, db) => {
    if (jobId === id) completions.push(db?.isTransaction === true);
    return complete(jobId, owner, now, db);
  };
  t.teardown(() => {
    store.complete = complete;
  });
  const sent = await untilState(app, a, id, 'sent');
  t.equal(sent.attempts, 3);
  await until('the job to be done', async () => (await jobRow(app, id)).state === 'done');
  t.same(completions, [true], 'once, in a transaction');
  t.same(
    fake('fake1').calls.map((c) => c.idempotencyKey),
    [id, id, id]
  );
  t.equal(before - (await app.svc.wallet.balance(a.account_id)), 1000, 'charged once');
});

t.test('not sent on every attempt: failed after maxAttempts, the hold given back', async (t) => {
  const clock = shiftedClock(t);
  const { app, a } = await outboxApp(t);
  fake('fake1').modes.push('not_sent', 'not_sent', 'not_sent');
  const before = await app.svc.wallet.balance(a.account_id);
  const id = (await send(app, a, { to: 'bob' })).json().message_id;
  await passBackoff(app, clock, id, 1);
  await passBackoff(app, clock, id, 2);
  const failed = await untilState(app, a, id, 'failed');
  t.equal(failed.attempts, 3);
  t.equal(fake('fake1').calls.length, 3);
  t.equal(await app.svc.wallet.balance(a.account_id), before, 'nothing charged');
  t.equal(await count(app, 'wallet_holds', [['account_id', a.account_id]]), 0);
});

for (const mode of ['unavailable', 'timeout'] as const) {
  t.test(`a vendor that may have acted (${mode}) is neither retried nor failed over`, async (t) => {
    const clock = shiftedClock(t);
    const { app, a } = await outboxApp(t, [{ id: 'fake1' }, { id: 'fake2' }]);
    fake('fake1').modes.push(mode);
    const before = await app.svc.wallet.balance(a.account_id);
    const id = (await send(app, a, { to: 'carol' })).json().message_id;
    const failed = await untilState(app, a, id, 'failed');
    t.equal(failed.error.code, mode === 'timeout' ? 'vendor_timeout' : 'vendor_error');
    clock.advance(3_600_000);
    app.svc.jobs.wake(KIND);
    await until('the job to be done', async () => (await jobRow(app, id)).state === 'done');
    t.equal(fake('fake1').calls.length, 1, 'called once');
    t.equal(fake('fake2').calls.length, 0, 'no failover');
    t.equal(await app.svc.wallet.balance(a.account_id), before, 'the hold is given back');
  });
}

t.test('not sent by the first vendor: the router fails over to the next at once', async (t) => {
  const { app, a } = await outboxApp(t, [{ id: 'fake1' }, { id: 'fake2' }]);
  fake('fake1').modes.push('not_sent');
  const id = (await send(app, a, { to: 'dan' })).json().message_id;
  const sent = await untilState(app, a, id, 'sent');
  t.equal(sent.vendor, 'fake2');
  t.equal(sent.attempts, 1, 'one attempt of the outbox, two vendors inside it');
  t.same(fake('fake2').calls, [{ to: 'dan', idempotencyKey: id }]);
});

t.test('a pinned vendor is the only one called', async (t) => {
  const { app, a } = await outboxApp(t, [{ id: 'fake1' }, { id: 'fake2' }]);
  const id = (await send(app, a, { to: 'erin', vendor: 'fake2' })).json().message_id;
  t.equal((await untilState(app, a, id, 'sent')).vendor, 'fake2');
  t.equal(fake('fake1').calls.length, 0);
});

/** A record accepted with an attempt already recorded and no outcome: what a node that died mid-call leaves. */
async function crashedMidCall(app: FastifyInstance, accountId: string, vendors: string[]) {
  const box = app.svc.outbox.kind('testmsg')!;
  return app.svc.db.transaction().execute(async (trx) => {
    const { record } = await box.accept(trx, { accountId, input: { to: 'zed' }, data: { to: 'zed' } });
    await leaveAttemptOpen(trx, record.id, vendors);
    return record.id;
  });
}

t.test('crash recovery: a vendor without idempotency keys is never called again (outcome_unknown)', async (t) => {
  const { app, a } = await outboxApp(t);
  const before = await app.svc.wallet.balance(a.account_id);
  const id = await crashedMidCall(app, a.account_id, ['fake1']);
  const failed = await untilState(app, a, id, 'failed');
  t.equal(failed.error.code, 'outcome_unknown');
  t.match(failed.error.message, /may or may not have been sent/);
  t.equal(fake('fake1').calls.length, 0, 'not resent');
  t.equal(await app.svc.wallet.balance(a.account_id), before, 'the hold is given back');
});

t.test('crash recovery: a vendor that honours idempotency keys gets the same key again', async (t) => {
  const { app, a } = await outboxApp(t, [{ id: 'fake1', idempotency_keys: true }]);
  const id = await crashedMidCall(app, a.account_id, ['fake1']);
  const sent = await untilState(app, a, id, 'sent');
  t.equal(sent.attempts, 2);
  t.same(fake('fake1').calls, [{ to: 'zed', idempotencyKey: id }]);
});

t.test('crash recovery: one vendor of the route without keys is enough to stop', async (t) => {
  const { app, a } = await outboxApp(t, [{ id: 'fake1', idempotency_keys: true }, { id: 'fake2' }]);
  const id = await crashedMidCall(app, a.account_id, ['fake1', 'fake2']);
  t.equal((await untilState(app, a, id, 'failed')).error.code, 'outcome_unknown');
  t.equal(fake('fake1').calls.length + fake('fake2').calls.length, 0);
});
