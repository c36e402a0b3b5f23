import { type CallOptions, type VideoCancelInput, type VideoCancelOutput, isApiError } from '../../core/kit/area.js';
import { type VideoRoute, type VideoRow, parseRoute } from './store.js';
import type { VideoDeps } from './submit.js';

// How a job reaches its vendors again after it was stored: the caller's own keys read anew
// (a job stores none), each candidate with its stored plan, nothing charged by the call itself
// (the job's hold is settled when the video is in).

export type Credentials = Map<string, Record<string, string>>;

/** The caller's BYOK keys for the job's candidates, read again; a key revoked meanwhile drops its vendor. */
export async function restoreCredentials(d: VideoDeps, row: VideoRow, route: VideoRoute): Promise<Credentials> {
  if (!route.byok.length) return new Map();
  const instances = route.byok.map((id) => d.svc.vendors.get(id)).filter((i) => !!i);
  return d.svc.router.callerCredentials(row.account_id, instances);
}

/** The candidates still usable, in order (a BYOK one only while its key is). */
export function usable(route: VideoRoute, creds: Credentials, ids = route.order): string[] {
  return ids.filter((id) => !route.byok.includes(id) || creds.has(id));
}

export function callOpts(row: VideoRow, route: VideoRoute, creds: Credentials, ids: string[]): CallOptions {
  return {
    accountId: row.account_id,
    charge: false,
    ref: row.job_id,
    idempotencyKey: row.job_id,
    route: ids.map((id) => {
      const credentials = creds.get(id);
      return { id, plan: route.plans[id], ...(credentials ? { byok: { credentials, fee: 0 } } : {}) };
    }),
  };
}

/**
 * Ask the vendor to stop a job nobody will be charged for, so the operator (or the caller, on
 * their own key) is not billed for it there either. Best effort, never throws: the job is
 * already final, and a vendor that refuses or is down changes nothing for the caller.
 */
export async function cancelAtVendor(d: VideoDeps, row: VideoRow, vendor = row.vendor, id = row.vendor_job_id) {
  if (!vendor || !id || !d.svc.vendors.get(vendor)?.instance.capabilities['video.cancel']) return;
  const log = { job_id: row.job_id, vendor, vendor_job_id: id };
  try {
    const route = parseRoute(row);
    const creds = await restoreCredentials(d, row, route);
    if (!usable(route, creds, [vendor]).length) return;
    const input: VideoCancelInput = { vendor_job_id: id, credentials: creds.get(vendor) };
    const r = await d.svc.router.call<VideoCancelInput, VideoCancelOutput>(
      'video.cancel',
      input,
      callOpts(row, route, creds, [vendor])
    );
    d.log.info({ ...log, vendor_status: r.output.vendor_status }, 'video job canceled at its vendor');
  } catch (e) {
    d.log.warn({ ...log, error: isApiError(e) ? e.message : (e as Error).message }, 'the vendor did not cancel');
  }
}
