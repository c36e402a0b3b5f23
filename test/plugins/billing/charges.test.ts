import t from 'tap';
import { shiftedClock } from '../../helpers/clock.js';
import { until } from '../../helpers/wait.js';
import { FAST, receiver, verify } from '../scheduling/receiver.js';
import { billingApp, charge, count, getCharge, refund, storedState } from './billing-app.js';

// Charges on the sandbox processor: its test payment methods, bad input, accounts, idempotency.

t.test('a charge succeeds, is read back and listed; another account sees none of it', async (t) => {
  const { app, a, b } = await billingApp(t);
  const res = await charge(app, a, {
    amount: 1050,
    currency: 'usd',
    payment_method_id: 'pm_card_visa',
    customer_id: 'cus_1',
  });
  t.equal(res.statusCode, 200, res.body);
  const c = res.json();
  t.match(c, {
    charge_id: /^ch_/,
    amount: 1050,
    currency: 'USD',
    state: 'succeeded',
    amount_refunded: 0,
    customer_id: 'cus_1',
    payment_method_id: 'pm_card_visa',
    vendor: 'sandbox-payments',
  });
  t.notOk('error' in c);
  t.same((await getCharge(app, a, c.charge_id)).json(), c);
  const other = await getCharge(app, b, c.charge_id);
  t.equal(other.statusCode, 404);
  t.equal(other.json().error.code, 'not_found');

  await charge(app, a, { amount: 7, currency: 'JPY', payment_method_id: 'pm_card_visa', customer_id: 'cus_2' });
  const page1 = (await app.inject({ method: 'GET', url: '/v1/billing/charges?limit=1', headers: a.auth })).json();
  t.equal(page1.items.length, 1);
  t.ok(page1.next_cursor);
  const page2 = (
    await app.inject({ method: 'GET', url: `/v1/billing/charges?limit=1&cursor=${page1.next_cursor}`, headers: a.auth })
  ).json();
  t.equal(page2.items.length, 1);
  t.equal(page2.next_cursor, null);
  t.same(new Set([page1.items[0].charge_id, page2.items[0].charge_id]).size, 2);
  const mine = (
    await app.inject({ method: 'GET', url: '/v1/billing/charges?customer_id=cus_1', headers: a.auth })
  ).json();
  t.same(
    mine.items.map((x: any) => x.charge_id),
    [c.charge_id]
  );
  t.same((await app.inject({ method: 'GET', url: '/v1/billing/charges', headers: b.auth })).json().items, []);
});

t.test('the currency exponent: JPY 0, USD 2, KWD 3 decimals, all integers of the smallest unit', async (t) => {
  const { app, a } = await billingApp(t);
  for (const [currency, amount] of [
    ['JPY', 500],
    ['USD', 500],
    ['KWD', 1500],
  ] as const) {
    const res = await charge(app, a, { amount, currency, payment_method_id: 'pm_card_visa' });
    t.equal(res.statusCode, 200, res.body);
    t.match(res.json(), { amount, currency, state: 'succeeded' });
  }
  const refused = await charge(app, a, { amount: 100, currency: 'XYZ', payment_method_id: 'pm_card_visa' });
  t.equal(refused.statusCode, 400);
  t.match(refused.json().error, { code: 'validation_failed', param: 'currency' });
});

t.test('bad input is 4xx and stores and charges nothing', async (t) => {
  const { app, a } = await billingApp(t);
  const cases: Array<[Record<string, unknown>, number, string]> = [
    [{ amount: 0, currency: 'USD', payment_method_id: 'pm_card_visa' }, 400, 'amount 0'],
    [{ amount: 10.5, currency: 'USD', payment_method_id: 'pm_card_visa' }, 400, 'fractional amount'],
    [{ amount: -5, currency: 'USD', payment_method_id: 'pm_card_visa' }, 400, 'negative amount'],
    [{ amount: '100', currency: 'USD', payment_method_id: 'pm_card_visa' }, 400, 'amount as a string'],
    [{ amount: 100_000_000, currency: 'USD', payment_method_id: 'pm_card_visa' }, 400, 'over the cap'],
    [{ amount: 100, currency: 'US', payment_method_id: 'pm_card_visa' }, 400, 'two letters'],
    [{ amount: 100, currency: 'ABC', payment_method_id: 'pm_card_visa' }, 400, 'unknown currency'],
    [{ amount: 100, currency: 'USD' }, 400, 'no payment method'],
    [{ amount: 100, currency: 'USD', payment_method_id: 'pm_card_visa', extra: 1 }, 400, 'unknown field'],
    [{ amount: 100, currency: 'USD', payment_method_id: 'pm_nope' }, 422, 'a method the processor does not know'],
  ];
  for (const [body, status, what] of cases) {
    const res = await charge(app, a, body);
    t.equal(res.statusCode, status, `${what}: ${res.body}`);
  }
  t.equal(await count(app, 'billing_charges'), 0, 'nothing stored');
  const none = await getCharge(app, a, 'ch_doesnotexist');
  t.equal(none.statusCode, 404);
});

t.test('declines carry the vendor code and the reason', async (t) => {
  const { app, a } = await billingApp(t);
  const declined = (
    await charge(app, a, { amount: 100, currency: 'EUR', payment_method_id: 'pm_card_chargeDeclined' })
  ).json();
  t.match(declined, { state: 'failed', error: { code: 'card_declined', decline_code: 'generic_decline' } });
  const poor = (
    await charge(app, a, { amount: 100, currency: 'EUR', payment_method_id: 'pm_card_chargeDeclinedInsufficientFunds' })
  ).json();
  t.match(poor, {
    state: 'failed',
    error: { code: 'card_declined', decline_code: 'insufficient_funds', message: /insufficient funds/ },
  });
  const expired = (
    await charge(app, a, { amount: 100, currency: 'EUR', payment_method_id: 'pm_card_chargeDeclinedExpiredCard' })
  ).json();
  t.match(expired, { state: 'failed', error: { code: 'expired_card' } });
});

t.test('3-D Secure: requires_action, completed or failed on the hosted page', async (t) => {
  const { app, a } = await billingApp(t);
  const c = (
    await charge(app, a, { amount: 2500, currency: 'GBP', payment_method_id: 'pm_card_authenticationRequired' })
  ).json();
  t.equal(c.state, 'requires_action');
  const path = new URL(c.next_action_url).pathname;
  t.match(path, /^\/sandbox\/payments\/pi_sandbox_\w+\/authenticate$/);
  const page = await app.inject({ method: 'GET', url: path });
  t.equal(page.statusCode, 200);
  t.match(page.body, /25\.00 GBP/);
  t.match(page.headers['content-security-policy'], /frame-ancestors 'none'/);
  t.equal((await getCharge(app, a, c.charge_id)).json().state, 'requires_action', 'waits for the payer');
  const done = await app.inject({ method: 'POST', url: path.replace(/authenticate$/, 'complete') });
  t.equal(done.statusCode, 200);
  const after = (await getCharge(app, a, c.charge_id)).json();
  t.equal(after.state, 'succeeded');
  t.notOk('next_action_url' in after);
  const again = await app.inject({ method: 'POST', url: path.replace(/authenticate$/, 'fail') });
  t.equal(again.statusCode, 409, 'a settled payment does not move again');
  t.equal((await getCharge(app, a, c.charge_id)).json().state, 'succeeded');

  const c2 = (
    await charge(app, a, { amount: 100, currency: 'GBP', payment_method_id: 'pm_card_threeDSecure2Required' })
  ).json();
  await app.inject({ method: 'POST', url: new URL(c2.next_action_url).pathname.replace(/authenticate$/, 'fail') });
  t.match((await getCharge(app, a, c2.charge_id)).json(), {
    state: 'failed',
    error: { code: 'authentication_failed' },
  });
  const unknown = await app.inject({
    method: 'GET',
    url: '/sandbox/payments/pi_sandbox_000000000000000000000000/authenticate',
  });
  t.equal(unknown.statusCode, 404);
});

t.test('a delayed method is pending, then succeeds once its delay has passed', async (t) => {
  const clock = shiftedClock(t);
  const { app, a } = await billingApp(t, FAST);
  const c = (
    await charge(app, a, { amount: 900, currency: 'USD', payment_method_id: 'pm_usBankAccount_success' })
  ).json();
  t.equal(c.state, 'pending');
  t.equal((await getCharge(app, a, c.charge_id)).json().state, 'pending', 'not yet');
  const job = await app.svc.db.selectFrom('jobs').selectAll().where('kind', '=', 'billing.charge.lookup').execute();
  t.equal(job.length, 1, 'a lookup job was scheduled with the charge');
  clock.advance(61_000);
  // The job moves it, unread: the row changes without a GET.
  app.svc.jobs.wake('billing.charge.lookup');
  await until('the lookup job', async () => (await storedState(app, c.charge_id)) === 'succeeded');
  t.equal((await getCharge(app, a, c.charge_id)).json().state, 'succeeded');
});

t.test('an idempotency key replays the charge and charges once at the processor', async (t) => {
  const { app, a } = await billingApp(t);
  const impl = app.svc.vendors.get('sandbox-payments')!.instance.capabilities['payments.charge']!;
  const invoke = impl.invoke;
  let calls = 0;
  impl.invoke = (i: any, o: any) => (calls++, invoke.call(impl, i, o));
  t.teardown(() => {
    impl.invoke = invoke;
  });
  const body = { amount: 300, currency: 'USD', payment_method_id: 'pm_card_visa', idempotency_key: 'order-1' };
  const one = await charge(app, a, body);
  const two = await charge(app, a, body);
  t.equal(two.headers['idempotent-replayed'], 'true');
  t.same(two.json(), one.json());
  t.equal(calls, 1);
  const reused = await charge(app, a, { ...body, amount: 301 });
  t.equal(reused.statusCode, 409);
  t.equal(reused.json().error.code, 'idempotency_key_reused');
  t.equal(await count(app, 'billing_charges'), 1);
});

t.test('charge and refund state changes reach the event endpoints, signed as Standard Webhooks', async (t) => {
  const { app, a } = await billingApp(t, FAST);
  const rx = await receiver(t);
  const ep = await app.inject({
    method: 'POST',
    url: '/v1/events/endpoints',
    headers: a.auth,
    payload: {
      url: `${rx.url}/hook`,
      event_types: ['charge.succeeded', 'charge.partially_refunded', 'refund.succeeded'],
    },
  });
  t.equal(ep.statusCode, 200, ep.body);
  const c = (await charge(app, a, { amount: 400, currency: 'USD', payment_method_id: 'pm_card_visa' })).json();
  const r = (await refund(app, a, { charge_id: c.charge_id, amount: 100 })).json();
  await rx.waitFor(3);
  const events = rx.hits.map((h) => verify(ep.json().secret, h) as any);
  const byType = Object.fromEntries(events.map((e) => [e.type, e.data]));
  t.same(Object.keys(byType).sort(), ['charge.partially_refunded', 'charge.succeeded', 'refund.succeeded']);
  t.same(byType['charge.succeeded'], c);
  t.match(byType['charge.partially_refunded'], { charge_id: c.charge_id, amount_refunded: 100 });
  t.same(byType['refund.succeeded'], r);
  const forged = { ...rx.hits[0], body: rx.hits[0].body.replace('400', '401') };
  t.throws(() => verify(ep.json().secret, forged), 'a changed body does not verify');
});
