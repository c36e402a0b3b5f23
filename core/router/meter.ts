import type { DeferredCharges } from '../wallet/deferred-charges.js';

/** Per-request cost accumulator, read by the hook that writes the x-svc-* headers. */
export interface Meter {
  costMicros: number;
  vendor?: string;
  metered: boolean;
  /** Aborts when the client goes away before the response is sent: the call is cancelled. */
  signal?: AbortSignal;
  /**
   * Told when a vendor call starts, with the time it gives up by: the request's idempotency
   * claim is kept at least that long (core/http/idempotency.ts).
   */
  onDeadline?: (deadline: number) => void;
  /**
   * Set while the request holds an idempotency claim: the router's settles wait here and are
   * written with the request's stored answer, in one transaction (core/http/idempotency.ts).
   */
  charges?: DeferredCharges;
}
