import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  apiError,
  idempotentTransaction,
  isApiError,
  type JobHandler,
  BATCH_CANCEL_CAPABILITY,
  type BatchCancelInput,
  type BatchCancelOutput,
} from '../../../core/kit/area.js';
import { FINAL, batchRecord, holdOf, parseRoute, type BatchRow } from './store.js';
import type { BatchDeps } from './submit.js';

/** The caller's key for `vendor` when the batch runs on one (undefined: the operator's), null when it was revoked since. */
async function keyFor(d: BatchDeps, row: BatchRow, vendor: string): Promise<Record<string, string> | undefined | null> {
  if (!parseRoute(row).byok.includes(vendor)) return undefined;
  const inst = d.svc.vendors.get(vendor);
  const byok = await d.svc.router.callerCredentials(row.account_id, inst ? [inst] : []);
  return byok.get(vendor) ?? null;
}

/** Retries of a vendor cancel that failed on the vendor's side (down, 5xx, a timeout): ~7 hours with the engine's backoff. */
export const VENDOR_CANCEL_JOB = 'ai.batch.vendor-cancel';
const VENDOR_CANCEL_ATTEMPTS = 18;

interface VendorCancel {
  batch_id: string;
  vendor: string;
  vendor_batch_id: string;
}

/**
 * One try at the vendor's cancel: 'done' (canceled, or nothing to do), or 'retry' when the
 * vendor failed in a way a later try may not (down, 5xx, a timeout, a cooled-down instance).
 */
async function tryCancel(d: BatchDeps, row: BatchRow, c: VendorCancel): Promise<'done' | 'retry'> {
  const log = { batch_id: row.batch_id, vendor: c.vendor, vendor_batch_id: c.vendor_batch_id };
  if (!d.svc.vendors.get(c.vendor)?.instance.capabilities[BATCH_CANCEL_CAPABILITY]) {
    d.log.info(log, 'chat batch left to run at its vendor: the adapter cannot cancel one');
    return 'done';
  }
  try {
    const credentials = await keyFor(d, row, c.vendor);
    if (credentials === null) {
      d.log.warn(log, 'chat batch left to run at its vendor: the key it was submitted with is no longer active');
      return 'done';
    }
    const route = [{ id: c.vendor, ...(credentials ? { byok: { credentials, fee: 0 } } : {}) }];
    const input = { vendor_batch_id: c.vendor_batch_id, credentials };
    const r = await d.svc.router.call<BatchCancelInput, BatchCancelOutput>(BATCH_CANCEL_CAPABILITY, input, {
      accountId: row.account_id,
      route,
      charge: false,
      ref: row.batch_id,
    });
    d.log.info({ ...log, vendor_status: r.output.vendor_status }, 'chat batch canceled at its vendor');
    return 'done';
  } catch (e) {
    const retry = isApiError(e) && ['vendor_error', 'vendor_timeout', 'no_vendor_available'].includes(e.code);
    d.log.warn({ ...log, error: (e as Error).message, retry }, 'the vendor did not cancel the chat batch');
    return retry ? 'retry' : 'done';
  }
}

/**
 * Ask the vendor to stop a batch whose answer nobody will be charged for, so the operator (or
 * the caller, on their own key) is not billed for it either. Never throws: the batch is already
 * final here, and a vendor that refuses or is down changes nothing for the caller. A vendor that
 * is down or failing is asked again by a job, with backoff, for about seven hours.
 */
export async function cancelAtVendor(
  d: BatchDeps,
  row: BatchRow,
  vendor = row.vendor,
  vendorBatchId = row.vendor_batch_id
): Promise<void> {
  if (!vendor || !vendorBatchId) return;
  const c: VendorCancel = { batch_id: row.batch_id, vendor, vendor_batch_id: vendorBatchId };
  if ((await tryCancel(d, row, c)) === 'done') return;
  await d.svc.jobs
    .enqueue({
      kind: VENDOR_CANCEL_JOB,
      payload: c,
      runAt: Date.now() + d.cancelRetryMs,
      maxAttempts: VENDOR_CANCEL_ATTEMPTS,
      uniqueKey: `${VENDOR_CANCEL_JOB}:${vendor}:${vendorBatchId}`,
    })
    .catch((e) =>
      d.log.warn(
        { batch_id: row.batch_id, error: (e as Error).message },
        'the vendor cancel could not be queued for a retry'
      )
    );
}

/** The retry job: throws (and is tried again with backoff) while the vendor keeps failing. */
export function vendorCancelJobHandler(d: BatchDeps): JobHandler<VendorCancel> {
  return async (job) => {
    const row = await d.store.get(job.payload.batch_id);
    if (!row || (await tryCancel(d, row, job.payload)) === 'done') return;
    if (job.attempt < job.maxAttempts)
      throw new Error(`${job.payload.vendor} did not cancel batch ${job.payload.vendor_batch_id} yet`);
    d.log.warn(
      { batch_id: row.batch_id, vendor: job.payload.vendor, vendor_batch_id: job.payload.vendor_batch_id },
      'gave up asking the vendor to cancel a chat batch'
    );
  };
}

/**
 * POST /v1/ai/batches/{id}/cancel: queued or running → canceled, the hold given back in full,
 * then the vendor asked to stop its batch. The move, the release and the idempotent answer
 * commit in one transaction, and the move is conditional on the state it leaves: of concurrent
 * cancels, and of a cancel and the batch's answer or failure (which move and settle or release
 * in one transaction too), exactly one moves the batch and its hold; the others find it final
 * (409) and change nothing. A retry of a cancel whose node died after the commit replays it.
 */
export async function cancelBatch(d: BatchDeps, req: FastifyRequest, reply: FastifyReply, batchId: string) {
  const row = await d.store.getFor(req.principal!.accountId, batchId);
  if (!row) throw apiError('not_found', `No batch ${batchId} in this account.`, { param: 'id' });
  let now = row;
  const answer = await idempotentTransaction(d.svc, req, reply, async (trx) => {
    const moved =
      !FINAL.includes(row.state)
      && (await d.store.move(
        batchId,
        ['queued', 'running'],
        { state: 'canceled', completed_at: Date.now() },
        undefined,
        trx
      ));
    if (!moved) {
      const state = (await d.store.get(batchId, trx))?.state ?? row.state;
      throw apiError('invalid_state', `Batch ${batchId} is ${state}: only a queued or running batch can be canceled.`, {
        param: 'id',
        details: { state },
      });
    }
    await d.svc.wallet.release(holdOf(row), trx);
    // Read again: a submit that finished just before the move has recorded the vendor's batch
    // since `row` was read (one that finishes after it finds the batch canceled and cancels its own).
    now = (await d.store.get(batchId, trx))!;
    return batchRecord(now);
  });
  await cancelAtVendor(d, now);
  return answer;
}
