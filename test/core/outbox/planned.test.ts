import t from 'tap';
import { count, outboxApp, send, untilState } from './outbox-app.js';
import { fake } from '../../helpers/outbox-vendor.js';

// A capability with a planner: planning reads the database (the caller's own keys, through the
// byok area's credentials provider), so it happens before the caller's transaction, which on
// SQLite holds the one connection (planning inside it waited on itself for good).

const planner = (_req: unknown, cands: Array<{ instance: { id: string } }>) =>
  [...cands].reverse().map((c) => ({ id: c.instance.id, plan: { picked: 'by the planner' } }));

t.test('with a planner: the send is planned before its transaction and goes the planned way', async (t) => {
  const { app, a } = await outboxApp(t, [{ id: 'fake1' }, { id: 'fake2' }]);
  app.svc.router.planner('test.message', planner);
  const res = await send(app, a, { to: 'pia' });
  t.equal(res.statusCode, 200, res.body);
  const sent = await untilState(app, a, res.json().message_id, 'sent');
  t.equal(sent.vendor, 'fake2', "the planner's first candidate");
  t.equal(fake('fake1').calls.length, 0);
  const row = await app.svc.db
    .selectFrom('outbox_records')
    .select('route')
    .where('record_id', '=', sent.message_id)
    .executeTakeFirstOrThrow();
  t.same(JSON.parse(row.route), [
    { id: 'fake2', plan: { picked: 'by the planner' } },
    { id: 'fake1', plan: { picked: 'by the planner' } },
  ]);
});

t.test('with a planner, accept without a plan is refused before anything is written', async (t) => {
  const { app, a } = await outboxApp(t);
  app.svc.router.planner('test.message', planner);
  const box = app.svc.outbox.kind('testmsg')!;
  await t.rejects(
    app.svc.db
      .transaction()
      .execute((trx) => box.accept(trx, { accountId: a.account_id, input: { to: 'x' }, data: { to: 'x' } })),
    /plan\(\) before the transaction/
  );
  t.equal(await count(app, 'outbox_records'), 0);
  const route = await box.plan({ accountId: a.account_id });
  const { record } = await app.svc.db
    .transaction()
    .execute((trx) => box.accept(trx, { accountId: a.account_id, input: { to: 'x' }, data: { to: 'x' }, route }));
  await untilState(app, a, record.id, 'sent');
});
