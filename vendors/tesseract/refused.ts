import { VendorFailure } from '../../core/kit/vendor.js';

/** The caller's document or request is wrong (413 over a cap, else 422): no other engine would do better. */
export function refused(message: string, status: 413 | 422 = 422): VendorFailure {
  return new VendorFailure('client_error', message, { status });
}
