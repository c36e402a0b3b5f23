import t from 'tap';
import Stripe from 'stripe';
import type { FastifyInstance } from 'fastify';
import { makeApp, activate } from '../../helpers/app.js';
import { stripeFake, STRIPE_KEY } from '../../fakes/stripe-fake.js';
import { charge, getCharge, refund, storedState } from './billing-app.js';

// The billing area's Stripe webhook (`payment_intent.*`, `refund.*`): signed events move a
// pending charge or refund once, emit its event once; forged, stale or replayed ones change nothing.

const WHSEC = 'whsec_test_YmlsbGluZy13ZWJob29rLXNlY3JldA';

async function hooked(t: any) {
  const fake = await stripeFake(t);
  const { app } = await makeApp(t, {
    vendors: [
      {
        id: 'stripe',
        use: 'stripe',
        config: {
          secret_key: STRIPE_KEY,
          billing_webhook_secret: WHSEC,
          webhook_secret: 'whsec_top',
          base_url: fake.url,
        },
      },
    ],
  });
  const emitted: string[] = [];
  const emit = app.svc.events.emit.bind(app.svc.events);
  app.svc.events.emit = async (trx, e) => {
    emitted.push(e.type);
    return emit(trx, e);
  };
  return { app, fake, emitted, a: await activate(app) };
}

const sign = (payload: string, secret = WHSEC, timestamp?: number) =>
  Stripe.webhooks.generateTestHeaderString({ payload, secret, ...(timestamp ? { timestamp } : {}) });

const hook = (app: FastifyInstance, payload: string, header: string, instance = 'stripe') =>
  app.inject({
    method: 'POST',
    url: `/v1/billing/webhooks/${instance}`,
    headers: { 'content-type': 'application/json', 'stripe-signature': header },
    payload,
  });

t.test('payment_intent.succeeded settles a processing charge once; forged, stale, replayed: nothing', async (t) => {
  const { app, fake, emitted, a } = await hooked(t);
  const c = (
    await charge(app, a, { amount: 900, currency: 'USD', payment_method_id: 'pm_usBankAccount_success' })
  ).json();
  t.equal(c.state, 'pending');
  const pi = fake.intents.get([...fake.intents.keys()][0])!;
  t.equal(pi.status, 'processing');
  Object.assign(pi, { status: 'succeeded', amount_received: 900 });
  const paid = fake.event('payment_intent.succeeded', pi);
  const state = () => storedState(app, c.charge_id);

  t.equal((await hook(app, paid, sign(paid, 'whsec_other'))).statusCode, 401, 'another secret');
  t.equal((await hook(app, paid, sign(paid, 'whsec_top'))).statusCode, 401, "the top-up endpoint's secret");
  t.equal((await hook(app, paid.replace('900', '9000'), sign(paid))).statusCode, 401, 'changed after signing');
  const stale = sign(paid, WHSEC, Math.floor(Date.now() / 1000) - 3600);
  t.equal((await hook(app, paid, stale)).statusCode, 401, 'outside the tolerance');
  t.equal((await hook(app, paid, '')).statusCode, 401, 'unsigned');
  t.equal((await hook(app, paid, sign(paid), 'nope')).statusCode, 404, 'no such instance');
  t.equal(await state(), 'pending', 'nothing moved');

  const header = sign(paid);
  t.equal((await hook(app, paid, header)).statusCode, 200);
  t.equal(await state(), 'succeeded');
  t.equal((await hook(app, paid, header)).statusCode, 200, 'a replay is acknowledged');
  const again = fake.event('payment_intent.succeeded', pi);
  t.equal((await hook(app, again, sign(again))).statusCode, 200, 'a second delivery under another id');
  t.same(
    emitted.filter((e) => e !== 'charge.pending'),
    ['charge.succeeded'],
    'one event emitted'
  );
  const events = await app.svc.db.selectFrom('billing_vendor_events').selectAll().execute();
  t.equal(events.length, 2, 'both delivered ids recorded, each once');
  t.match((await getCharge(app, a, c.charge_id)).json(), { state: 'succeeded', amount_refunded: 0 });

  // A late `processing` moves nothing back.
  const late = fake.event('payment_intent.processing', { ...pi, status: 'processing' });
  t.equal((await hook(app, late, sign(late))).statusCode, 200);
  t.equal(await state(), 'succeeded');
});

t.test('payment_intent.payment_failed fails the charge with its code; another amount moves nothing', async (t) => {
  const { app, fake, emitted, a } = await hooked(t);
  const c = (
    await charge(app, a, { amount: 700, currency: 'USD', payment_method_id: 'pm_usBankAccount_success' })
  ).json();
  const pi = [...fake.intents.values()][0];
  const wrong = fake.event('payment_intent.succeeded', { ...pi, status: 'succeeded', amount: 70 });
  t.equal((await hook(app, wrong, sign(wrong))).statusCode, 200);
  t.equal((await getCharge(app, a, c.charge_id)).json().state, 'pending', 'an event for another amount');
  Object.assign(pi, {
    status: 'requires_payment_method',
    last_payment_error: { type: 'card_error', code: 'insufficient_funds', message: 'The account has no funds.' },
  });
  const failed = fake.event('payment_intent.payment_failed', pi);
  t.equal((await hook(app, failed, sign(failed))).statusCode, 200);
  t.match((await getCharge(app, a, c.charge_id)).json(), {
    state: 'failed',
    error: { code: 'insufficient_funds', message: 'The account has no funds.' },
  });
  t.same(emitted, ['charge.pending', 'charge.failed']);
  // An event of a PaymentIntent the gateway did not make is acknowledged and stores nothing.
  const foreign = fake.event('payment_intent.succeeded', { ...pi, id: 'pi_elsewhere', status: 'succeeded' });
  t.equal((await hook(app, foreign, sign(foreign))).statusCode, 200);
  t.equal((await app.svc.db.selectFrom('billing_vendor_events').selectAll().execute()).length, 2);
});

t.test('refund.updated settles a pending refund once; a failed one frees its amount once', async (t) => {
  const { app, fake, emitted, a } = await hooked(t);
  const c = (await charge(app, a, { amount: 1000, currency: 'USD', payment_method_id: 'pm_card_visa' })).json();
  fake.refundsAs('pending');
  const r1 = (await refund(app, a, { charge_id: c.charge_id, amount: 300 })).json();
  const r2 = (await refund(app, a, { charge_id: c.charge_id, amount: 200 })).json();
  t.match([r1.state, r2.state], ['pending', 'pending']);
  t.match((await getCharge(app, a, c.charge_id)).json(), { state: 'partially_refunded', amount_refunded: 500 });
  const [s1, s2] = fake.refunds;
  t.equal(s1.metadata.refund_id, r1.refund_id, "the gateway's id is in the Refund's metadata");

  s1.status = 'succeeded';
  const ok = fake.event('refund.updated', s1);
  t.equal((await hook(app, ok, sign(ok))).statusCode, 200);
  s2.status = 'failed';
  s2.failure_reason = 'expired_or_canceled_card';
  const bad = fake.event('refund.failed', s2);
  const badHeader = sign(bad);
  t.equal((await hook(app, bad, badHeader)).statusCode, 200);
  t.equal((await hook(app, bad, badHeader)).statusCode, 200, 'replayed');
  const again = fake.event('refund.updated', s2);
  t.equal((await hook(app, again, sign(again))).statusCode, 200, 'delivered again under another id');

  const got = async (id: string) =>
    (await app.inject({ method: 'GET', url: `/v1/billing/refunds/${id}`, headers: a.auth })).json();
  t.match(await got(r1.refund_id), { state: 'succeeded' });
  t.match(await got(r2.refund_id), { state: 'failed', error: { code: 'expired_or_canceled_card' } });
  t.match((await getCharge(app, a, c.charge_id)).json(), { state: 'partially_refunded', amount_refunded: 300 });
  t.same(
    emitted.filter((e) => e.startsWith('refund.')),
    ['refund.succeeded', 'refund.failed'],
    'each refund event once'
  );
  // A forged refund event changes nothing.
  const r3 = (await refund(app, a, { charge_id: c.charge_id, amount: 100 })).json();
  const forged = fake.event('refund.updated', { ...fake.refunds[2], status: 'failed' });
  t.equal((await hook(app, forged, sign(forged, 'whsec_other'))).statusCode, 401);
  t.match(await got(r3.refund_id), { state: 'pending' });
  t.equal((await getCharge(app, a, c.charge_id)).json().amount_refunded, 400);

  // charge.refunded carries the charge's refunds: the pending one settles from it.
  const s3 = { ...fake.refunds[2], status: 'succeeded' };
  const refunded = fake.event('charge.refunded', {
    id: 'ch_stripe_1',
    object: 'charge',
    payment_intent: s3.payment_intent,
    refunds: { object: 'list', data: [s1, s3], has_more: false },
  });
  t.equal((await hook(app, refunded, sign(refunded))).statusCode, 200);
  t.match(await got(r3.refund_id), { state: 'succeeded' });
  t.match(await got(r1.refund_id), { state: 'succeeded' }, 'one already settled moves nothing');
  t.equal((await getCharge(app, a, c.charge_id)).json().amount_refunded, 400);
  t.equal(emitted.filter((e) => e === 'refund.succeeded').length, 2, 'r1 and r3, each once');
});
