import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import { Ok, readVendorCallback, type PaymentEvent, type Svc } from '../../core/kit/area.js';
import { awaitingVendor, type Charges } from './charges.js';
import type { Refunds } from './refunds.js';

/**
 * POST /v1/billing/webhooks/{instance}: a payments vendor's signed payment and refund events
 * (Stripe's `payment_intent.*`, `refund.*`, `charge.refunded`), so a pending charge or refund
 * settles when the vendor says, not at the next lookup (which stays the fallback). The
 * instance's adapter verifies the signature over the raw body (`payments.charge.events`): a
 * forged, tampered or stale one is 401 and changes nothing. Each event's id is stored in the
 * transaction of the move it makes, which is the same conditional update a lookup makes: a
 * replayed event, or one racing a lookup, moves nothing twice and emits nothing twice. Events
 * of payments the gateway did not make are acknowledged, so the vendor stops retrying.
 */
export function registerBillingWebhooks(app: FastifyInstance, charges: Charges, refunds: Refunds): void {
  const svc = app.svc;
  app.register(async (scope) => {
    // The signature covers the exact bytes: the body is kept as a string for the adapter.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));
    scope.post(
      '/v1/billing/webhooks/:instance',
      {
        config: { auth: 'none', operation: 'billing.webhook', errors: ['unauthenticated', 'not_found'] },
        schema: {
          summary: "A payments vendor's payment and refund events (signed by the vendor)",
          tags: ['billing'],
          params: Type.Object({ instance: Type.String({ minLength: 1, maxLength: 100 }) }),
          response: { 200: Ok },
        },
      },
      async (req: FastifyRequest<{ Params: { instance: string } }>) => {
        const { instance, output } = await readVendorCallback<PaymentEvent[]>(
          svc,
          req,
          'payments.charge.events',
          'payment events'
        );
        for (const e of output) await apply(svc, charges, refunds, instance, e);
        return { ok: true };
      }
    );
  });
}

async function apply(svc: Svc, charges: Charges, refunds: Refunds, vendor: string, e: PaymentEvent): Promise<void> {
  const ref = e.charge?.vendor_ref ?? e.refund?.vendor_ref;
  if (!ref) return;
  // Unknown to the gateway (not its payment, or its record not yet committed): nothing is stored,
  // so the lookup fallback still settles a charge whose event came before its record.
  if (!(await charges.findByVendorRef(vendor, ref))) return;
  await svc.db.transaction().execute(async (trx) => {
    if (!(await firstDelivery(trx, vendor, e.event_id))) return;
    const charge = (await charges.findByVendorRef(vendor, ref, trx))!;
    if (e.charge) {
      if (!awaitingVendor(charge.state)) return;
      const { amount, currency } = e.charge;
      if ((amount !== undefined && amount !== charge.amount) || (currency && currency !== charge.currency)) {
        svc.log.warn({ charge_id: charge.charge_id, event_id: e.event_id }, 'payment event amount is not its charge’s');
        return;
      }
      await charges.move(charge, e.charge, trx);
      return;
    }
    const r = e.refund!;
    const refund = await refunds.ofCharge(trx, charge.charge_id, r.refund_id, r.vendor_refund_ref);
    if (refund?.state !== 'pending' || r.state === 'pending') return;
    await refunds.settle(trx, refund, charge, { state: r.state, ref: r.vendor_refund_ref, code: r.failure_code });
  });
}

/** Record the event id; false when it was recorded before (a replay or a repeated delivery). */
async function firstDelivery(trx: Kysely<any>, vendor: string, eventId: string): Promise<boolean> {
  const res = await trx
    .insertInto('billing_vendor_events')
    .values({ vendor, event_id: eventId, received_at: Date.now() })
    .onConflict((oc) => oc.columns(['vendor', 'event_id']).doNothing())
    .executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0n) === 1;
}
