import t from 'tap';
import { count, outboxApp, record, send, untilState } from './outbox-app.js';
import { fake } from '../../helpers/outbox-vendor.js';
import { receiver, verify } from '../../plugins/scheduling/receiver.js';

t.test('a replayed accept returns the same record and enqueues nothing', async (t) => {
  const { app, a } = await outboxApp(t);
  const key = { 'idempotency-key': 'k-1' };
  const first = await send(app, a, { to: 'amy' }, key);
  const id = first.json().message_id;
  await untilState(app, a, id, 'sent');
  const again = await send(app, a, { to: 'amy' }, key);
  t.equal(again.statusCode, 200);
  t.equal(again.headers['idempotent-replayed'], 'true');
  t.same(again.json(), first.json(), 'the stored answer');
  t.equal(await count(app, 'outbox_records'), 1);
  t.equal(await count(app, 'jobs', [['kind', 'outbox.send.testmsg']]), 1);
  t.equal(fake('fake1').calls.length, 1);
});

t.test('accept with a dedupe key is once-only: no second record, hold or job', async (t) => {
  const { app, a } = await outboxApp(t);
  const box = app.svc.outbox.kind('testmsg')!;
  const accept = () =>
    app.svc.db
      .transaction()
      .execute((trx) =>
        box.accept(trx, { accountId: a.account_id, input: { to: 'x' }, data: { to: 'x' }, dedupeKey: 'd1' })
      );
  const one = await accept();
  const two = await accept();
  t.ok(one.created);
  t.notOk(two.created);
  t.equal(two.record.id, one.record.id);
  t.equal(await count(app, 'outbox_records'), 1);
  t.equal(await count(app, 'jobs', [['kind', 'outbox.send.testmsg']]), 1);
  await untilState(app, a, one.record.id, 'sent');
  t.equal(fake('fake1').calls.length, 1);
});

t.test('bad input and no vendor write, reserve and enqueue nothing', async (t) => {
  const { app, a } = await outboxApp(t);
  const before = await app.svc.wallet.balance(a.account_id);
  const bad = await send(app, a, { to: 'x', unknown: 1 });
  t.equal(bad.statusCode, 400);
  const unknownVendor = await send(app, a, { to: 'x', vendor: 'nope' });
  t.equal(unknownVendor.statusCode, 503, unknownVendor.body);
  t.equal(await count(app, 'outbox_records'), 0);
  t.equal(await count(app, 'jobs', [['kind', 'outbox.send.testmsg']]), 0);
  t.equal(await app.svc.wallet.balance(a.account_id), before);
});

t.test("another account's record is 404, and its list is its own", async (t) => {
  const { app, a, b } = await outboxApp(t);
  const id = (await send(app, a, { to: 'amy' })).json().message_id;
  const res = await app.inject({ method: 'GET', url: `/v1/outboxtest/${id}`, headers: b.auth });
  t.equal(res.statusCode, 404);
  t.equal(res.json().error.code, 'not_found');
  const moved = await app.inject({
    method: 'POST',
    url: `/v1/outboxtest/${id}/status`,
    headers: b.auth,
    payload: { state: 'delivered' },
  });
  t.equal(moved.statusCode, 404);
  const list = await app.inject({ method: 'GET', url: '/v1/outboxtest', headers: b.auth });
  t.same(list.json(), { items: [], next_cursor: null });
});

t.test('list: newest first, a state filter, cursor pages', async (t) => {
  const { app, a } = await outboxApp(t);
  fake('fake1').modes.push('ok', 'unavailable', 'ok');
  const ids: string[] = [];
  for (const to of ['a', 'b', 'c']) {
    const id = (await send(app, a, { to })).json().message_id;
    await untilState(app, a, id, to === 'b' ? 'failed' : 'sent');
    ids.push(id);
  }
  const page = async (q: string) =>
    (await app.inject({ method: 'GET', url: `/v1/outboxtest?${q}`, headers: a.auth })).json();
  t.same(
    (await page('')).items.map((r: any) => r.message_id),
    [...ids].reverse()
  );
  const one = await page('state=sent&limit=1');
  t.same(
    one.items.map((r: any) => r.message_id),
    [ids[2]]
  );
  t.type(one.next_cursor, 'string');
  const two = await page(`state=sent&limit=1&cursor=${one.next_cursor}`);
  t.same(
    two.items.map((r: any) => r.message_id),
    [ids[0]]
  );
  t.equal(two.next_cursor, null);
  t.same(
    (await page('state=failed')).items.map((r: any) => r.message_id),
    [ids[1]]
  );
});

t.test('status moves: the allowed ones emit to the endpoints that want them; others change nothing', async (t) => {
  const { app, a } = await outboxApp(t);
  const all = await receiver(t);
  const some = await receiver(t);
  const endpoint = async (url: string, event_types?: string[]) =>
    (
      await app.inject({
        method: 'POST',
        url: '/v1/events/endpoints',
        headers: a.auth,
        payload: { url, ...(event_types ? { event_types } : {}) },
      })
    ).json().secret;
  const allSecret = await endpoint(all.url);
  const someSecret = await endpoint(some.url, ['outboxtest.bounced']);
  const id = (await send(app, a, { to: 'amy' })).json().message_id;
  await untilState(app, a, id, 'sent');
  const move = (state: string) =>
    app.inject({ method: 'POST', url: `/v1/outboxtest/${id}/status`, headers: a.auth, payload: { state } });
  t.equal((await move('delivered')).json().state, 'delivered');
  const back = await move('sent');
  t.equal(back.statusCode, 409);
  t.equal(back.json().error.code, 'invalid_state');
  t.equal((await record(app, a, id)).state, 'delivered', 'unchanged');
  t.equal((await move('bounced')).json().state, 'bounced');
  await all.waitFor(3);
  await some.waitFor(1);
  // Each event is its own delivery job: they may arrive in any order.
  t.same(all.hits.map((h) => (verify(allSecret, h) as any).type).sort(), [
    'outboxtest.bounced',
    'outboxtest.delivered',
    'outboxtest.sent',
  ]);
  const bounced = verify(someSecret, some.hits[0]) as any;
  t.equal(bounced.type, 'outboxtest.bounced');
  t.equal(bounced.data.state, 'bounced');
  t.match(bounced.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.equal(some.hits[0].headers['webhook-event-type'], 'outboxtest.bounced');
  t.equal(all.hits.length, 3, 'nothing for the refused move');
});

t.test('recordUnsent: a record that is never sent, with its event, and no hold, job or vendor call', async (t) => {
  const { app, a } = await outboxApp(t);
  const rx = await receiver(t);
  const secret = (
    await app.inject({ method: 'POST', url: '/v1/events/endpoints', headers: a.auth, payload: { url: rx.url } })
  ).json().secret;
  const before = await app.svc.wallet.balance(a.account_id);
  const box = app.svc.outbox.kind('testmsg')!;
  const error = { code: 'suppressed', message: 'The recipient opted out.' };
  const { record: r } = await app.svc.db
    .transaction()
    .execute((trx) =>
      box.recordUnsent(trx, { accountId: a.account_id, data: { to: 'x' }, state: 'suppressed', error })
    );
  t.equal(r.state, 'suppressed');
  t.same((await record(app, a, r.id)).error, error);
  await rx.waitFor(1);
  const ev = verify(secret, rx.hits[0]) as any;
  t.equal(ev.type, 'outboxtest.suppressed');
  t.equal(ev.data.message_id, r.id);
  t.equal(await count(app, 'jobs', [['kind', 'outbox.send.testmsg']]), 0);
  t.equal(await app.svc.wallet.balance(a.account_id), before);
  t.equal(fake('fake1').calls.length, 0);
});

t.test('an accept in a transaction that rolls back leaves no record, hold or job, and the balance whole', async (t) => {
  const { app, a } = await outboxApp(t);
  const before = await app.svc.wallet.balance(a.account_id);
  const box = app.svc.outbox.kind('testmsg')!;
  await t.rejects(
    app.svc.db.transaction().execute(async (trx) => {
      await box.accept(trx, { accountId: a.account_id, input: { to: 'x' }, data: { to: 'x' } });
      throw new Error('the area failed after accepting');
    }),
    /after accepting/
  );
  t.equal(await count(app, 'outbox_records'), 0);
  t.equal(await count(app, 'wallet_holds', [['account_id', a.account_id]]), 0);
  t.equal(await count(app, 'jobs', [['kind', 'outbox.send.testmsg']]), 0);
  t.equal(await app.svc.wallet.balance(a.account_id), before);
});
