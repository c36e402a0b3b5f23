import t from 'tap';
import { shiftedClock } from '../../helpers/clock.js';
import { until } from '../../helpers/wait.js';
import { billingApp, charge, count, getCharge, refund } from './billing-app.js';

// Refunds: partial and full, never above the charge, also when 100 race (SQLite and PostgreSQL).

t.test('partial then full refunds move the charge; above what is left is 422 and changes nothing', async (t) => {
  const { app, a, b } = await billingApp(t);
  const c = (await charge(app, a, { amount: 1000, currency: 'USD', payment_method_id: 'pm_card_visa' })).json();

  const r1 = await refund(app, a, { charge_id: c.charge_id, amount: 300 });
  t.equal(r1.statusCode, 200, r1.body);
  t.match(r1.json(), { refund_id: /^re_/, charge_id: c.charge_id, amount: 300, currency: 'USD', state: 'succeeded' });
  t.match((await getCharge(app, a, c.charge_id)).json(), { state: 'partially_refunded', amount_refunded: 300 });
  const got = await app.inject({ method: 'GET', url: `/v1/billing/refunds/${r1.json().refund_id}`, headers: a.auth });
  t.same(got.json(), r1.json());
  t.equal(
    (await app.inject({ method: 'GET', url: `/v1/billing/refunds/${r1.json().refund_id}`, headers: b.auth }))
      .statusCode,
    404
  );

  const over = await refund(app, a, { charge_id: c.charge_id, amount: 701 });
  t.equal(over.statusCode, 422);
  t.match(over.json().error, { code: 'unprocessable', param: 'amount', details: { amount: 701, amount_left: 700 } });
  t.match(over.json().error.message, /7\.01 USD is more than the 7\.00 USD left/);

  const rest = await refund(app, a, { charge_id: c.charge_id });
  t.match(rest.json(), { amount: 700, state: 'succeeded' }, 'no amount: all that is left');
  t.match((await getCharge(app, a, c.charge_id)).json(), { state: 'refunded', amount_refunded: 1000 });
  const more = await refund(app, a, { charge_id: c.charge_id, amount: 1 });
  t.equal(more.statusCode, 422);
  t.equal(await count(app, 'billing_refunds'), 2, 'refused refunds stored nothing');
});

t.test('bad refunds: another account, a failed charge, bad amounts', async (t) => {
  const { app, a, b } = await billingApp(t);
  const c = (await charge(app, a, { amount: 500, currency: 'JPY', payment_method_id: 'pm_card_visa' })).json();
  const theirs = await refund(app, b, { charge_id: c.charge_id, amount: 1 });
  t.equal(theirs.statusCode, 404, "another account's charge");
  t.equal(theirs.json().error.code, 'not_found');
  const failed = (
    await charge(app, a, { amount: 500, currency: 'JPY', payment_method_id: 'pm_card_chargeDeclined' })
  ).json();
  const onFailed = await refund(app, a, { charge_id: failed.charge_id });
  t.equal(onFailed.statusCode, 409);
  t.equal(onFailed.json().error.code, 'invalid_state');
  for (const amount of [0, 1.5, -1, '5']) {
    t.equal((await refund(app, a, { charge_id: c.charge_id, amount })).statusCode, 400, `amount ${amount}`);
  }
  t.equal((await refund(app, a, { charge_id: 'ch_nope', amount: 1 })).statusCode, 404);
  t.equal((await refund(app, a, { charge_id: c.charge_id, amount: 1, reason: 'x' })).statusCode, 400);
  t.equal(await count(app, 'billing_refunds'), 0);
  t.match((await getCharge(app, a, c.charge_id)).json(), { state: 'succeeded', amount_refunded: 0 });
});

t.test('100 concurrent refunds of 1 against a charge of 50: exactly 50 succeed', async (t) => {
  const { app, a } = await billingApp(t);
  const c = (await charge(app, a, { amount: 50, currency: 'USD', payment_method_id: 'pm_card_visa' })).json();
  const all = await Promise.all(
    Array.from({ length: 100 }, () => refund(app, a, { charge_id: c.charge_id, amount: 1 }))
  );
  const by = (s: number) => all.filter((r) => r.statusCode === s).length;
  t.equal(by(200), 50, 'succeeded');
  t.equal(by(422), 50, 'refused');
  t.ok(all.filter((r) => r.statusCode === 422).every((r) => r.json().error.code === 'unprocessable'));
  t.match((await getCharge(app, a, c.charge_id)).json(), { state: 'refunded', amount_refunded: 50 });
  const sum = await app.svc.db
    .selectFrom('billing_refunds')
    .select((eb) => eb.fn.sum('amount').as('s'))
    .where('charge_id', '=', c.charge_id)
    .where('state', '=', 'succeeded')
    .executeTakeFirstOrThrow();
  t.equal(Number(sum.s), 50, 'the refunds add up to the charge');
});

t.test('a refund retried with its idempotency key refunds once', async (t) => {
  const { app, a } = await billingApp(t);
  const c = (await charge(app, a, { amount: 100, currency: 'KWD', payment_method_id: 'pm_card_visa' })).json();
  const one = await refund(app, a, { charge_id: c.charge_id, amount: 40, idempotency_key: 'r-1' });
  const two = await refund(app, a, { charge_id: c.charge_id, amount: 40, idempotency_key: 'r-1' });
  t.equal(two.headers['idempotent-replayed'], 'true');
  t.same(two.json(), one.json());
  t.match((await getCharge(app, a, c.charge_id)).json(), { amount_refunded: 40 });
});

t.test('a refund the vendor refuses gives its amount back', async (t) => {
  const { app, a } = await billingApp(t);
  const c = (await charge(app, a, { amount: 100, currency: 'USD', payment_method_id: 'pm_card_visa' })).json();
  const impl = app.svc.vendors.get('sandbox-payments')!.instance.capabilities['payments.refund']!;
  const invoke = impl.invoke;
  const { VendorFailure } = await import('../../../core/kit/vendor.js');
  impl.invoke = async () => {
    throw new VendorFailure('client_error', 'charge_already_refunded', { status: 400 });
  };
  t.teardown(() => {
    impl.invoke = invoke;
  });
  const res = await refund(app, a, { charge_id: c.charge_id, amount: 60 });
  t.equal(res.statusCode, 422);
  t.match((await getCharge(app, a, c.charge_id)).json(), { state: 'succeeded', amount_refunded: 0 });
  const row = await app.svc.db.selectFrom('billing_refunds').selectAll().executeTakeFirstOrThrow();
  t.equal(row.state, 'failed');
  impl.invoke = invoke;
  t.equal((await refund(app, a, { charge_id: c.charge_id, amount: 100 })).statusCode, 200, 'the whole amount again');
});

t.test('a refund whose outcome was lost stays pending, held; its retry asks again under the same key', async (t) => {
  const { app, a } = await billingApp(t);
  const c = (await charge(app, a, { amount: 100, currency: 'USD', payment_method_id: 'pm_card_visa' })).json();
  const impl = app.svc.vendors.get('sandbox-payments')!.instance.capabilities['payments.refund']!;
  const invoke = impl.invoke;
  const keys: string[] = [];
  const { VendorFailure } = await import('../../../core/kit/vendor.js');
  impl.invoke = async (i: any, o: any) => {
    keys.push(i.idempotency_key);
    if (keys.length === 1) {
      await invoke.call(impl, i, o); // the processor refunded, then the answer was lost
      throw new VendorFailure('timeout', 'no answer');
    }
    return invoke.call(impl, i, o);
  };
  t.teardown(() => {
    impl.invoke = invoke;
  });
  const body = { charge_id: c.charge_id, amount: 70, idempotency_key: 'lost-1' };
  const lost = await refund(app, a, body);
  t.equal(lost.statusCode, 504, lost.body);
  t.match((await getCharge(app, a, c.charge_id)).json(), { amount_refunded: 70 }, 'held while unknown');
  t.equal(
    (await refund(app, a, { charge_id: c.charge_id, amount: 31 })).statusCode,
    422,
    'the held amount is not free'
  );
  const retry = await refund(app, a, body);
  t.equal(retry.statusCode, 200, retry.body);
  t.match(retry.json(), { amount: 70, state: 'succeeded' });
  t.equal(keys[0], keys[1], 'the same idempotency key at the vendor');
  t.equal(keys[0], retry.json().refund_id);
  t.equal(await count(app, 'billing_refunds'), 1);
  t.match((await getCharge(app, a, c.charge_id)).json(), { state: 'partially_refunded', amount_refunded: 70 });
});

t.test('without a key, the refund job asks again under the refund id and settles it', async (t) => {
  const clock = shiftedClock(t);
  const { app, a } = await billingApp(t, { jobs: { poll_ms: 20 } });
  const c = (await charge(app, a, { amount: 100, currency: 'USD', payment_method_id: 'pm_card_visa' })).json();
  const impl = app.svc.vendors.get('sandbox-payments')!.instance.capabilities['payments.refund']!;
  const invoke = impl.invoke;
  const { VendorFailure } = await import('../../../core/kit/vendor.js');
  let calls = 0;
  impl.invoke = async (i: any, o: any) => {
    if (++calls === 1) throw new VendorFailure('unavailable', 'HTTP 500', { status: 500 });
    return invoke.call(impl, i, o);
  };
  t.teardown(() => {
    impl.invoke = invoke;
  });
  t.equal((await refund(app, a, { charge_id: c.charge_id, amount: 40 })).statusCode, 502);
  const row = () => app.svc.db.selectFrom('billing_refunds').selectAll().executeTakeFirstOrThrow();
  t.equal((await row()).state, 'pending');
  clock.advance(10_000);
  app.svc.jobs.wake('billing.refund.retry');
  await until('the refund job', async () => (await row()).state === 'succeeded');
  t.equal(calls, 2);
  t.match((await getCharge(app, a, c.charge_id)).json(), { state: 'partially_refunded', amount_refunded: 40 });
});

t.test('GET /v1/billing/refunds: newest first, by charge and state, paged; never another account’s', async (t) => {
  const { app, a, b } = await billingApp(t);
  const list = async (who: typeof a, query: string) =>
    (await app.inject({ method: 'GET', url: `/v1/billing/refunds?${query}`, headers: who.auth })).json();
  const c1 = (await charge(app, a, { amount: 500, currency: 'JPY', payment_method_id: 'pm_card_visa' })).json();
  const c2 = (await charge(app, a, { amount: 900, currency: 'USD', payment_method_id: 'pm_card_visa' })).json();
  const cb = (await charge(app, b, { amount: 900, currency: 'USD', payment_method_id: 'pm_card_visa' })).json();
  const made = [];
  for (const [c, amount] of [
    [c1, 100],
    [c2, 200],
    [c1, 300],
  ] as const)
    made.push((await refund(app, a, { charge_id: c.charge_id, amount })).json());
  await refund(app, b, { charge_id: cb.charge_id, amount: 50 });

  const all = await list(a, '');
  t.same(
    all.items.map((r: any) => r.refund_id),
    made.map((r) => r.refund_id).reverse(),
    'all of the account’s, newest first'
  );
  t.same(all.items[0], made[2], 'as GET shows it');
  t.equal(all.items[2].currency, 'JPY', "the charge's currency");
  t.equal(all.next_cursor, null);
  const p1 = await list(a, 'limit=2');
  const p2 = await list(a, `limit=2&cursor=${p1.next_cursor}`);
  t.same(
    [...p1.items, ...p2.items].map((r: any) => r.refund_id),
    all.items.map((r: any) => r.refund_id),
    'pages walk the list once'
  );
  t.equal(p2.next_cursor, null);
  t.same(
    (await list(a, `charge_id=${c1.charge_id}`)).items.map((r: any) => r.amount),
    [300, 100]
  );
  t.equal((await list(a, 'state=succeeded')).items.length, 3);
  t.same((await list(a, 'state=pending')).items, []);
  t.same((await list(b, `charge_id=${c1.charge_id}`)).items, [], "another account's charge: none");
  t.same(
    (await list(b, '')).items.map((r: any) => r.charge_id),
    [cb.charge_id]
  );
  const bad = await app.inject({ method: 'GET', url: '/v1/billing/refunds?state=lost', headers: a.auth });
  t.equal(bad.statusCode, 400);
});
