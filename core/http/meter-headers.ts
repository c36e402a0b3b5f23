import type { FastifyInstance } from 'fastify';
import { formatUsd } from '../wallet/money.js';
import { STALE_HOLD_MS } from '../wallet/wallet.js';

/**
 * Every metered response says what it cost: x-svc-cost-usd, x-svc-balance-usd,
 * x-svc-vendor (where a vendor served it) and x-svc-latency-ms. The meter also carries a
 * signal that aborts when the client goes away, so a vendor call made with
 * `meter: req.meter` is cancelled and nothing is charged.
 */
export function installMeterHeaders(app: FastifyInstance): void {
  app.decorateRequest('meter', null as any);
  app.addHook('onRequest', async (req, reply) => {
    const gone = new AbortController();
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) gone.abort(new Error('the client closed the connection'));
    });
    req.meter = { costMicros: 0, metered: false, signal: gone.signal };
    reply.header('x-request-id', req.id);
  });
  // The holds behind these numbers: those of calls that died with an earlier process are
  // given back before this one serves its first request.
  app.addHook('onReady', async () => {
    const n = await app.svc.wallet.releaseStale(STALE_HOLD_MS);
    if (n) app.svc.log.warn({ holds: n }, 'released wallet holds left by calls that did not finish');
  });
  app.addHook('onSend', async (req, reply, payload) => {
    const m = req.meter;
    if (!m?.metered || !req.principal) return payload;
    reply.header('x-svc-cost-usd', formatUsd(m.costMicros));
    reply.header('x-svc-balance-usd', formatUsd(await app.svc.wallet.balance(req.principal.accountId)));
    if (m.vendor) reply.header('x-svc-vendor', m.vendor);
    reply.header('x-svc-latency-ms', String(Math.round(reply.elapsedTime)));
    return payload;
  });
}
