import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { formatUsd } from '../wallet/money.js';
import type { Meter } from '../router/router.js';
import type { DeferredCharges } from '../wallet/deferred-charges.js';
import { clientGoneSignal } from './client-gone.js';

/**
 * What a request has cost so far, and a signal that aborts when the client goes away, so a
 * vendor call made with `meter: req.meter` is cancelled and nothing is charged. A class, and
 * the signal made on first use: this is on every request and most never call a vendor.
 */
class RequestMeter implements Meter {
  costMicros = 0;
  metered = false;
  vendor?: string;
  onDeadline?: (deadline: number) => void;
  charges?: DeferredCharges;
  private gone?: AbortSignal;

  constructor(private readonly res: ServerResponse) {}

  get signal(): AbortSignal {
    return (this.gone ??= clientGoneSignal(this.res));
  }
}

/**
 * Every metered response says what it cost: x-svc-cost-usd, x-svc-balance-usd,
 * x-svc-vendor (where a vendor served it) and x-svc-latency-ms. The hooks take callbacks,
 * not promises: an unmetered request (most of them) then allocates nothing here.
 */
export function installMeterHeaders(app: FastifyInstance): void {
  app.decorateRequest('meter', null as any);
  app.addHook('onRequest', (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
    req.meter = new RequestMeter(reply.raw);
    reply.header('x-request-id', req.id);
    done();
  });
  app.addHook(
    'onSend',
    (
      req: FastifyRequest,
      reply: FastifyReply,
      payload: unknown,
      done: (err: Error | null, payload?: unknown) => void
    ) => {
      const m = req.meter;
      if (!m?.metered || !req.principal) return done(null, payload);
      reply.header('x-svc-cost-usd', formatUsd(m.costMicros));
      if (m.vendor) reply.header('x-svc-vendor', m.vendor);
      reply.header('x-svc-latency-ms', String(Math.round(reply.elapsedTime)));
      const accountId = req.principal.accountId;
      app.svc.wallet.balance(accountId).then(
        (b) => {
          // Charges written with the stored answer, after this hook, still hold their holds.
          reply.header('x-svc-balance-usd', formatUsd(b + (m.charges?.heldOver(accountId) ?? 0)));
          done(null, payload);
        },
        (e) => done(e)
      );
    }
  );
}
