import type { FastifyReply, FastifyRequest } from 'fastify';
import { apiError, idempotentTransaction } from '../../core/kit/area.js';
import { FINAL, LIVE, holdOf } from './store.js';
import type { VideoDeps } from './submit.js';
import { cancelAtVendor } from './vendor-calls.js';

/**
 * POST /v1/video/jobs/{id}/cancel: queued or running → canceled, the hold given back in full,
 * then the vendor asked to stop its job. The move, the release and the idempotent answer
 * commit in one transaction, and the move is conditional on the state it leaves: of concurrent
 * cancels, and of a cancel and the job's success or failure (which move and settle or release
 * in one transaction too), exactly one moves the job and its money; the others find it final
 * (409 invalid_state) and change nothing.
 */
export async function cancelVideo(d: VideoDeps, req: FastifyRequest, reply: FastifyReply, jobId: string) {
  const row = await d.store.getFor(req.principal!.accountId, jobId);
  if (!row) throw apiError('not_found', `No video job ${jobId} in this account.`, { param: 'id' });
  let now = row;
  const answer = await idempotentTransaction(d.svc, req, reply, async (trx) => {
    const patch = { state: 'canceled' as const, completed_at: Date.now(), reference_image: null };
    const moved = !FINAL.includes(row.state) && (await d.store.move(jobId, LIVE, patch, undefined, trx));
    if (!moved) {
      const state = (await d.store.get(jobId, trx))?.state ?? row.state;
      throw apiError('invalid_state', `Video job ${jobId} is ${state}: only a queued or running job can be canceled.`, {
        param: 'id',
        details: { state },
      });
    }
    await d.svc.wallet.release(holdOf(row), trx);
    // Read again: a submit that finished just before the move has recorded the vendor's job
    // since `row` was read (one that finishes after it finds the job canceled and cancels its own).
    now = (await d.store.get(jobId, trx))!;
    return { ok: true };
  });
  await cancelAtVendor(d, now);
  return answer;
}
