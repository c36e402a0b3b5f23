import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Transaction } from 'kysely';
import type { Svc } from '../context.js';
import { claimTakenOver, keepsIdempotentResult, storeAnswer } from './idempotency.js';

/**
 * Commit a request's writes and its idempotent answer in one transaction (the outbox rule):
 * a node killed after the commit leaves the answer stored, so the retry that takes the key
 * over replays it and creates nothing again; killed before it, neither exists and the retry
 * runs the request once. Stored apart, a kill between the two commits made the takeover
 * create a second record with a new id that no receiver could de-duplicate.
 *
 * The answer is what `work` returns, serialized as the reply sends it (the route's response
 * schema, the reply's status). Storing it is fenced by the claim's owner: when another request
 * took the key over meanwhile nothing commits and this one answers 409 idempotency_in_progress.
 * An effect outside the database (an HTTP call, an email, an SMS) never runs inside `work`:
 * `work` enqueues a job for it (core/jobs, `enqueue(spec, trx)`), which records its attempt
 * before the effect. Without an idempotency key this is a plain transaction.
 */
export async function idempotentTransaction<T>(
  svc: Pick<Svc, 'db' | 'idempotencyKey' | 'wallet'>,
  req: FastifyRequest,
  reply: FastifyReply,
  work: (trx: Transaction<any>) => Promise<T>
): Promise<T> {
  const idem = req.idem;
  // The request's charges so far (Meter.charges) commit with its writes and answer, or not at all.
  const charges = req.meter?.charges?.take() ?? [];
  const answer = await svc.db
    .transaction()
    .execute(async (trx) => {
      const result = await work(trx);
      await svc.wallet.settleDeferred(trx, charges);
      if (idem && keepsIdempotentResult(reply.statusCode)) {
        const body = reply.serialize(result) as string;
        if (!(await storeAnswer(trx, svc.idempotencyKey, idem, reply.statusCode, body))) throw claimTakenOver();
      }
      return result;
    })
    .catch(async (e) => {
      await svc.wallet.releaseDeferred(charges);
      throw e;
    });
  // Kept with the writes: the onSend hook has nothing left to store, onResponse nothing to release.
  if (idem && req.idem === idem && keepsIdempotentResult(reply.statusCode)) req.idem = undefined;
  return answer;
}
