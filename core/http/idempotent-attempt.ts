import type { FastifyRequest } from 'fastify';
import type { Svc } from '../context.js';
import { claimTakenOver, whereClaim } from './idempotency.js';

/**
 * Record an effect's attempt before it leaves the gateway (the outbox rule's other half): what
 * names the effect (an id the vendor de-duplicates on, as a checkout's `topup_id`) is committed
 * on the request's idempotency claim first. A request that takes the claim over from one that
 * died gets that attempt back, so it makes the effect again under the same name and records
 * one row for it (with its answer, in idempotentTransaction), never a second effect under a new
 * id. Returns the attempt to make: the recorded one, or `make()` once recorded. Without an
 * idempotency key nothing is recorded. The claim's answer, once stored, replaces all this.
 */
export async function recordAttempt<T>(svc: Pick<Svc, 'db'>, req: FastifyRequest, make: () => T): Promise<T> {
  const idem = req.idem;
  if (!idem) return make();
  const row = await whereClaim(svc.db.selectFrom('idempotency_keys').select('attempt'), idem).executeTakeFirst();
  if (row?.attempt) return JSON.parse(row.attempt) as T;
  const attempt = make();
  const r = await whereClaim(svc.db.updateTable('idempotency_keys').set({ attempt: JSON.stringify(attempt) }), idem)
    .where('state', '=', 'running')
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) !== 1) throw claimTakenOver();
  return attempt;
}
