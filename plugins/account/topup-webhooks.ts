import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { Ok, readVendorCallback, type CheckoutEvent, type Svc } from '../../core/kit/area.js';
import { findBySession, settleTopup } from './topup-service.js';

/**
 * POST /v1/account/topup/webhooks/{instance}: a payments vendor's checkout events (Stripe's
 * `checkout.session.completed`…). The instance's adapter verifies the signature over the raw
 * body (`payments.checkout.events`); a forged or unsigned one is 401 and changes nothing. An
 * event moves its top-up out of pending once (settleTopup's conditional update), so a replayed
 * or repeated event credits nothing more. An event whose amount or currency is not the
 * top-up's, or of a session another instance opened, moves nothing. Events of unknown sessions
 * are acknowledged, so the vendor stops retrying.
 */
export function registerTopupWebhooks(app: FastifyInstance): void {
  const svc = app.svc;
  app.register(async (scope) => {
    // The signature covers the exact bytes: the body is kept as a string for the adapter.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));
    scope.post(
      '/v1/account/topup/webhooks/:instance',
      {
        config: { auth: 'none', operation: 'account.topup.webhook', errors: ['unauthenticated', 'not_found'] },
        schema: {
          summary: "A payments vendor's checkout events for wallet top-ups (signed by the vendor)",
          tags: ['account'],
          params: Type.Object({ instance: Type.String({ minLength: 1, maxLength: 100 }) }),
          response: { 200: Ok },
        },
      },
      async (req: FastifyRequest<{ Params: { instance: string } }>) => {
        const { instance, output } = await readVendorCallback<CheckoutEvent[]>(
          svc,
          req,
          'payments.checkout.events',
          'checkout events'
        );
        for (const e of output) await apply(svc, instance, e);
        return { ok: true };
      }
    );
  });
}

async function apply(svc: Svc, instance: string, e: CheckoutEvent): Promise<void> {
  const t = await findBySession(svc, e.session_id);
  if (!t || t.vendor !== instance) return;
  const cents = Math.round(t.amount_micros / 10_000);
  const currency = svc.config.wallet.currency;
  if (e.state === 'succeeded' && (e.amount_total !== cents || (e.currency && e.currency !== currency))) {
    svc.log.warn(
      { topup_id: t.topup_id, event_id: e.event_id, amount_total: e.amount_total, currency: e.currency },
      'checkout event amount does not match its top-up; nothing credited'
    );
    return;
  }
  await settleTopup(svc, e.session_id, e.state);
}
