import t from 'tap';
import { clientApp, collect, rejects, walked } from './client-app.js';

// database-independent: the client's wire; the billing rows are test/plugins/billing's, on both.
// client.billing against a listening gateway on the sandbox processor: charges, a decline as a
// failed Charge, pages, refunds and their refusal as SvcError.

t.test('charge, get, list and iterate; refunds; errors as SvcError', async (t) => {
  const { c } = await clientApp(t);
  const ok = await c.billing.charge(
    { amount: 1200, currency: 'USD', payment_method_id: 'pm_card_visa', customer_id: 'cus_c' },
    { idempotencyKey: 'c-1' }
  );
  t.match(ok, { charge_id: /^ch_/, state: 'succeeded', amount: 1200, amount_refunded: 0 });
  t.equal(
    (
      await c.billing.charge(
        { amount: 1200, currency: 'USD', payment_method_id: 'pm_card_visa', customer_id: 'cus_c' },
        { idempotencyKey: 'c-1' }
      )
    ).charge_id,
    ok.charge_id,
    'the retry answers the same charge'
  );
  const declined = await c.billing.charge({
    amount: 100,
    currency: 'JPY',
    payment_method_id: 'pm_card_chargeDeclined',
  });
  t.match(declined, { state: 'failed', error: { code: 'card_declined' } });
  t.same(await c.billing.getCharge(ok.charge_id), ok);
  const page = await c.billing.listCharges({ limit: 1 });
  t.equal(page.items.length, 1);
  walked(
    t,
    await collect(c.billing.iterateCharges({ limit: 1 })),
    (x) => x.charge_id,
    [ok.charge_id, declined.charge_id],
    'iterate'
  );
  t.same(
    (await c.billing.listCharges({ customer_id: 'cus_c' })).items.map((x) => x.charge_id),
    [ok.charge_id]
  );

  const r = await c.billing.refund({ charge_id: ok.charge_id, amount: 200 });
  t.match(r, { refund_id: /^re_/, amount: 200, state: 'succeeded' });
  t.same(await c.billing.getRefund(r.refund_id), r);
  const r2 = await c.billing.refund({ charge_id: ok.charge_id, amount: 100 });
  t.same((await c.billing.listRefunds({ limit: 1 })).items, [r2], 'newest first');
  walked(t, await collect(c.billing.iterateRefunds({ limit: 1 })), (x) => x.refund_id, [r2.refund_id, r.refund_id]);
  t.same((await c.billing.listRefunds({ charge_id: declined.charge_id })).items, []);
  t.equal((await c.billing.listRefunds({ state: 'succeeded', charge_id: ok.charge_id })).items.length, 2);
  await rejects(
    t,
    c.billing.refund({ charge_id: ok.charge_id, amount: 1001 }),
    { code: 'unprocessable', status: 422 },
    'above what is left'
  );
  await rejects(t, c.billing.getCharge('ch_missing'), { code: 'not_found', status: 404 }, 'unknown charge');
  await rejects(
    t,
    c.billing.charge({ amount: 0, currency: 'USD', payment_method_id: 'pm_card_visa' }),
    { code: 'validation_failed', status: 400 },
    'amount 0'
  );
});
