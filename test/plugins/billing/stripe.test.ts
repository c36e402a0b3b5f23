import t from 'tap';
import Stripe from 'stripe';
import { makeApp, activate } from '../../helpers/app.js';
import { shiftedClock } from '../../helpers/clock.js';
import { until } from '../../helpers/wait.js';
import { stripeFake, STRIPE_KEY } from '../../fakes/stripe-fake.js';
import { charge, count, getCharge, refund } from './billing-app.js';

// The `stripe` adapter through the official SDK against a loopback fake of Stripe's wire:
// charges, declines, 3-D Secure, refunds, a lost answer retried under Stripe's idempotency key,
// and the wallet top-up's Checkout Session with its signed webhook.

const WHSEC = 'whsec_test_c2VjcmV0LXNpZ25pbmcta2V5';

async function stripeApp(t: any, overrides: Record<string, unknown> = {}) {
  const fake = await stripeFake(t);
  const { app } = await makeApp(t, {
    vendors: [
      { id: 'stripe', use: 'stripe', config: { secret_key: STRIPE_KEY, webhook_secret: WHSEC, base_url: fake.url } },
    ],
    ...overrides,
  });
  return { app, fake, a: await activate(app), b: await activate(app) };
}

t.test('charges through the SDK: success, decline codes, unknown method, 3-D Secure on the hosted page', async (t) => {
  const { app, fake, a } = await stripeApp(t);
  const ok = await charge(app, a, {
    amount: 2000,
    currency: 'EUR',
    payment_method_id: 'pm_card_visa',
    customer_id: 'cus_9',
  });
  t.equal(ok.statusCode, 200, ok.body);
  const c = ok.json();
  t.match(c, { state: 'succeeded', vendor: 'stripe', amount: 2000, currency: 'EUR' });
  const call = fake.calls.find((x) => x.path === '/v1/payment_intents')!;
  t.equal(call.idempotencyKey, c.charge_id, "the charge id is Stripe's Idempotency-Key");
  t.match(call.body, {
    amount: '2000',
    currency: 'eur',
    confirm: 'true',
    customer: 'cus_9',
    metadata: { charge_id: c.charge_id },
  });

  const poor = (
    await charge(app, a, { amount: 500, currency: 'USD', payment_method_id: 'pm_card_chargeDeclinedInsufficientFunds' })
  ).json();
  t.match(poor, {
    state: 'failed',
    error: { code: 'card_declined', decline_code: 'insufficient_funds', message: 'Your card has insufficient funds.' },
  });
  const expired = (
    await charge(app, a, { amount: 500, currency: 'USD', payment_method_id: 'pm_card_chargeDeclinedExpiredCard' })
  ).json();
  t.match(expired, { state: 'failed', error: { code: 'expired_card' } });

  const before = await count(app, 'billing_charges');
  const unknown = await charge(app, a, { amount: 500, currency: 'USD', payment_method_id: 'pm_unknown' });
  t.equal(unknown.statusCode, 422);
  t.match(unknown.json().error.message, /No such PaymentMethod/);
  const kwd = await charge(app, a, { amount: 1505, currency: 'KWD', payment_method_id: 'pm_card_visa' });
  t.equal(kwd.statusCode, 422, 'Stripe takes KWD in multiples of 10');
  t.equal(await count(app, 'billing_charges'), before, 'nothing stored');

  const sca = (
    await charge(app, a, { amount: 1500, currency: 'GBP', payment_method_id: 'pm_card_authenticationRequired' })
  ).json();
  t.equal(sca.state, 'requires_action');
  t.ok(sca.next_action_url.startsWith(`${fake.url}/3ds/`), 'the hosted page is the vendor’s');
  t.equal((await getCharge(app, a, sca.charge_id)).json().state, 'requires_action');
  const page = await fetch(sca.next_action_url);
  t.equal(page.status, 200);
  const done = await fetch(`${sca.next_action_url}/complete`, { method: 'POST', redirect: 'manual' });
  t.equal(done.status, 302);
  t.match(done.headers.get('location'), new RegExp(`/billing/return/${sca.charge_id}$`), 'back to the return page');
  t.equal((await getCharge(app, a, sca.charge_id)).json().state, 'succeeded', 'looked up at Stripe');

  const failed = (
    await charge(app, a, { amount: 1500, currency: 'GBP', payment_method_id: 'pm_card_threeDSecure2Required' })
  ).json();
  await fetch(`${failed.next_action_url}/fail`, { method: 'POST', redirect: 'manual' });
  t.match((await getCharge(app, a, failed.charge_id)).json(), {
    state: 'failed',
    error: { code: 'payment_intent_authentication_failure' },
  });
});

t.test('an answer lost after Stripe charged: the retry reaches the same PaymentIntent, charged once', async (t) => {
  const { app, fake, a } = await stripeApp(t);
  const body = { amount: 4200, currency: 'USD', payment_method_id: 'pm_card_visa', idempotency_key: 'order-42' };
  fake.dropNextAnswer();
  const lost = await charge(app, a, body);
  t.equal(lost.statusCode, 502, lost.body);
  t.equal(fake.intents.size, 1, 'Stripe made the payment');
  t.equal(await count(app, 'billing_charges'), 0);
  const retry = await charge(app, a, body);
  t.equal(retry.statusCode, 200, retry.body);
  t.equal(fake.intents.size, 1, 'no second payment at Stripe');
  const keys = fake.calls.filter((c) => c.path === '/v1/payment_intents').map((c) => c.idempotencyKey);
  t.same(keys, [retry.json().charge_id, retry.json().charge_id], 'both calls under one Idempotency-Key');
  t.equal(await count(app, 'billing_charges'), 1);
  t.equal((await charge(app, a, body)).headers['idempotent-replayed'], 'true');
});

t.test('refunds at Stripe: partial, the rest, never above the charge', async (t) => {
  const { app, fake, a, b } = await stripeApp(t);
  const c = (await charge(app, a, { amount: 1000, currency: 'USD', payment_method_id: 'pm_card_visa' })).json();
  t.equal((await refund(app, b, { charge_id: c.charge_id, amount: 1 })).statusCode, 404);
  const r1 = await refund(app, a, { charge_id: c.charge_id, amount: 250 });
  t.match(r1.json(), { state: 'succeeded', amount: 250 });
  const call = fake.calls.find((x) => x.path === '/v1/refunds')!;
  t.equal(call.idempotencyKey, r1.json().refund_id);
  t.match(call.body, { payment_intent: fake.intents.keys().next().value, amount: '250' });
  t.equal((await refund(app, a, { charge_id: c.charge_id, amount: 751 })).statusCode, 422);
  t.match((await refund(app, a, { charge_id: c.charge_id })).json(), { amount: 750, state: 'succeeded' });
  t.same(
    fake.refunds.map((r) => r.amount),
    [250, 750]
  );
  t.match((await getCharge(app, a, c.charge_id)).json(), { state: 'refunded', amount_refunded: 1000 });
});

t.test('a refund re-sent after Stripe forgot its key (24 h) is found by its metadata, not made twice', async (t) => {
  const clock = shiftedClock(t);
  const { app, fake, a } = await stripeApp(t, { jobs: { poll_ms: 20 } });
  const c = (await charge(app, a, { amount: 1000, currency: 'USD', payment_method_id: 'pm_card_visa' })).json();
  fake.dropNextAnswer();
  t.equal((await refund(app, a, { charge_id: c.charge_id, amount: 300 })).statusCode, 502, 'the answer was lost');
  t.equal(fake.refunds.length, 1, 'Stripe made the refund');
  const row = () => app.svc.db.selectFrom('billing_refunds').selectAll().executeTakeFirstOrThrow();
  t.equal((await row()).state, 'pending');
  fake.forgetKeys();
  clock.advance(25 * 3600_000);
  app.svc.jobs.wake('billing.refund.retry');
  await until('the refund job', async () => (await row()).state === 'succeeded');
  t.equal(fake.refunds.length, 1, 'no second refund at Stripe');
  t.equal((await row()).vendor_refund_ref, fake.refunds[0].id, 'the refund Stripe made');
  const listed = fake.calls.filter((x) => x.method === 'GET' && x.path === '/v1/refunds');
  t.equal(listed.length, 1, "the PaymentIntent's refunds were listed before re-sending");
  t.equal(fake.calls.filter((x) => x.method === 'POST' && x.path === '/v1/refunds').length, 1, 'nothing re-created');
  t.match((await getCharge(app, a, c.charge_id)).json(), { state: 'partially_refunded', amount_refunded: 300 });
});

t.test('a re-sent refund Stripe never made is made then, once', async (t) => {
  const clock = shiftedClock(t);
  const { app, fake, a } = await stripeApp(t, { jobs: { poll_ms: 20 } });
  const c = (await charge(app, a, { amount: 1000, currency: 'USD', payment_method_id: 'pm_card_visa' })).json();
  // A refund of another PaymentIntent's: the list is of this one's alone.
  await refund(app, a, { charge_id: c.charge_id, amount: 100 });
  const impl = app.svc.vendors.get('stripe')!.instance.capabilities['payments.refund']!;
  const invoke = impl.invoke;
  const { VendorFailure } = await import('../../../core/kit/vendor.js');
  impl.invoke = async () => {
    impl.invoke = invoke;
    throw new VendorFailure('unavailable', 'connection reset before the request was written', { status: 502 });
  };
  t.equal((await refund(app, a, { charge_id: c.charge_id, amount: 200 })).statusCode, 502);
  fake.forgetKeys();
  clock.advance(25 * 3600_000);
  app.svc.jobs.wake('billing.refund.retry');
  const pending = () => app.svc.db.selectFrom('billing_refunds').selectAll().where('state', '=', 'pending').execute();
  await until('the refund job', async () => (await pending()).length === 0);
  t.same(
    fake.refunds.map((r) => r.amount),
    [100, 200],
    'made once, on re-sending'
  );
  t.match((await getCharge(app, a, c.charge_id)).json(), { amount_refunded: 300 });
});

t.test(
  'top-up through Stripe Checkout: the signed webhook credits once; forged or replayed changes nothing',
  async (t) => {
    const { app, fake, a } = await stripeApp(t);
    const balance = async () =>
      (await app.inject({ method: 'GET', url: '/v1/account/balance', headers: a.auth })).json().balance_usd;
    const top = (
      await app.inject({ method: 'POST', url: '/v1/account/topup', headers: a.auth, payload: { amount_usd: 12.5 } })
    ).json();
    t.match(top, { state: 'pending', checkout_url: new RegExp(`^${fake.url}/pay/cs_test_`) });
    const session = [...fake.sessions.values()][0];
    t.match(session, { amount_total: 1250, currency: 'usd', client_reference_id: top.topup_id, mode: 'payment' });
    const create = fake.calls.find((c) => c.path === '/v1/checkout/sessions')!;
    t.equal(create.idempotencyKey, top.topup_id);

    const hook = (payload: string, header: string) =>
      app.inject({
        method: 'POST',
        url: '/v1/account/topup/webhooks/stripe',
        headers: { 'content-type': 'application/json', 'stripe-signature': header },
        payload,
      });
    const paid = fake.sessionEvent(session.id, 'checkout.session.completed', {
      payment_status: 'paid',
      status: 'complete',
    });
    const forged = await hook(paid, Stripe.webhooks.generateTestHeaderString({ payload: paid, secret: 'whsec_other' }));
    t.equal(forged.statusCode, 401);
    const tampered = paid.replace('1250', '125000');
    const tamperedRes = await hook(
      tampered,
      Stripe.webhooks.generateTestHeaderString({ payload: paid, secret: WHSEC })
    );
    t.equal(tamperedRes.statusCode, 401, 'a body changed after signing');
    const stale = Stripe.webhooks.generateTestHeaderString({
      payload: paid,
      secret: WHSEC,
      timestamp: Math.floor(Date.now() / 1000) - 3600,
    });
    t.equal((await hook(paid, stale)).statusCode, 401, 'outside the tolerance');
    t.equal(await balance(), 5, 'nothing credited');

    const header = Stripe.webhooks.generateTestHeaderString({ payload: paid, secret: WHSEC });
    t.equal((await hook(paid, header)).statusCode, 200);
    t.equal(await balance(), 17.5, 'credited');
    t.equal((await hook(paid, header)).statusCode, 200, 'a replay is acknowledged');
    const again = fake.sessionEvent(session.id, 'checkout.session.completed', { payment_status: 'paid' });
    await hook(again, Stripe.webhooks.generateTestHeaderString({ payload: again, secret: WHSEC }));
    t.equal(await balance(), 17.5, 'and credits nothing more');
    const got = await app.inject({ method: 'GET', url: `/v1/account/topups/${top.topup_id}`, headers: a.auth });
    t.equal(got.json().state, 'succeeded');

    // A second top-up whose event names another amount is not credited.
    const top2 = (
      await app.inject({ method: 'POST', url: '/v1/account/topup', headers: a.auth, payload: { amount_usd: 20 } })
    ).json();
    const s2 = [...fake.sessions.values()].find((s) => s.client_reference_id === top2.topup_id)!;
    const wrong = fake.sessionEvent(s2.id, 'checkout.session.completed', { payment_status: 'paid', amount_total: 100 });
    await hook(wrong, Stripe.webhooks.generateTestHeaderString({ payload: wrong, secret: WHSEC }));
    t.equal(await balance(), 17.5);
    const expired = fake.sessionEvent(s2.id, 'checkout.session.expired');
    await hook(expired, Stripe.webhooks.generateTestHeaderString({ payload: expired, secret: WHSEC }));
    t.equal(
      (await app.inject({ method: 'GET', url: `/v1/account/topups/${top2.topup_id}`, headers: a.auth })).json().state,
      'expired'
    );
  }
);
