import { apiError } from '../../../core/errors.js';
import { credentialsFor } from '../../byok/providers.js';
import { BATCH_CANCEL_CAPABILITY, type BatchCancelInput, type BatchCancelOutput } from './contract.js';
import { FINAL, batchRecord, holdOf, parseRoute, type BatchRow } from './store.js';
import type { BatchDeps } from './submit.js';

/** The caller's key for `vendor` when the batch runs on one (undefined: the operator's), null when it was revoked since. */
async function keyFor(d: BatchDeps, row: BatchRow, vendor: string): Promise<Record<string, string> | undefined | null> {
  if (!parseRoute(row).byok.includes(vendor)) return undefined;
  const inst = d.svc.vendors.get(vendor);
  const byok = (await d.ai.byok()?.active(row.account_id)) ?? new Map();
  return (inst && credentialsFor(inst, byok)) || null;
}

/**
 * Ask the vendor to stop a batch whose answer nobody will be charged for, so the operator (or
 * the caller, on their own key) is not billed for it either. Best effort and never throws: the
 * batch is already final here, and a vendor that refuses or is down changes nothing for the caller.
 */
export async function cancelAtVendor(d: BatchDeps, row: BatchRow, vendor = row.vendor, vendorBatchId = row.vendor_batch_id): Promise<void> {
  if (!vendor || !vendorBatchId) return;
  const log = { batch_id: row.batch_id, vendor, vendor_batch_id: vendorBatchId };
  if (!d.svc.vendors.get(vendor)?.instance.capabilities[BATCH_CANCEL_CAPABILITY]) {
    d.log.info(log, 'chat batch left to run at its vendor: the adapter cannot cancel one');
    return;
  }
  try {
    const credentials = await keyFor(d, row, vendor);
    if (credentials === null) {
      d.log.warn(log, 'chat batch left to run at its vendor: the key it was submitted with is no longer active');
      return;
    }
    const r = await d.svc.router.call<BatchCancelInput, BatchCancelOutput>(BATCH_CANCEL_CAPABILITY, { vendor_batch_id: vendorBatchId, credentials }, {
      accountId: row.account_id, order: [vendor], charge: false, ref: row.batch_id,
    });
    d.log.info({ ...log, vendor_status: r.output.vendor_status }, 'chat batch canceled at its vendor');
  } catch (e) {
    d.log.warn({ ...log, error: (e as Error).message }, 'the vendor did not cancel the chat batch');
  }
}

/**
 * POST /v1/ai/batches/{id}/cancel: queued or running → canceled, the hold given back in full,
 * then the vendor asked to stop its batch. The move is conditional on the state it leaves, so a
 * poll or an answer arriving at the same moment either wins (and the cancel is 409) or finds
 * the batch canceled and neither charges nor changes it.
 */
export async function cancelBatch(d: BatchDeps, accountId: string, batchId: string) {
  const row = await d.store.getFor(accountId, batchId);
  if (!row) throw apiError('not_found', `No batch ${batchId} in this account.`, { param: 'id' });
  const moved = !FINAL.includes(row.state) && (await d.store.move(batchId, ['queued', 'running'], { state: 'canceled', completed_at: Date.now() }));
  if (!moved) {
    const state = (await d.store.get(batchId))?.state ?? row.state;
    throw apiError('invalid_state', `Batch ${batchId} is ${state}: only a queued or running batch can be canceled.`, { param: 'id', details: { state } });
  }
  await d.svc.wallet.release(holdOf(row));
  // Read again: a submit that finished just before the move has recorded the vendor's batch
  // since `row` was read (one that finishes after it finds the batch canceled and cancels its own).
  const now = (await d.store.get(batchId))!;
  await cancelAtVendor(d, now);
  return batchRecord(now);
}
