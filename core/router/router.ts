import type { Logger } from 'pino';
import type { CapabilitySpec, CapabilityImpl } from '../define.js';
import type { Wallet } from '../wallet/wallet.js';
import { apiError } from '../errors.js';
import { classifyGeneric, VendorFailure, type FailureKind } from './failure.js';
import type { VendorRegistry, RegisteredInstance } from './registry.js';
import { Cooldowns } from './cooldowns.js';

export interface Attempt {
  vendor: string;
  model?: string;
  status: 'ok' | FailureKind | 'skipped_cost_cap';
  latency_ms: number;
  error?: { code: string; message: string };
}

/** Per-request cost accumulator, read by the hook that writes the x-svc-* headers. */
export interface Meter {
  costMicros: number;
  vendor?: string;
  metered: boolean;
}

export interface CallOptions {
  accountId: string;
  region?: string;
  /** Pin one vendor instance (the `vendor` parameter). */
  vendor?: string;
  model?: string;
  /** Failover only to candidates whose estimate is within this × the primary's (default 1.5). */
  maxCostMultiplier?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
  meter?: Meter;
  /** Reference stored on the ledger entry (a record id). */
  ref?: string;
  /** Charge the wallet (default true). */
  charge?: boolean;
  /** Only these instance ids, in this order (a caller-side planner chose them). */
  order?: string[];
}

export interface CallResult<O> {
  output: O;
  vendor: string;
  costMicros: number;
  latencyMs: number;
  attempts: Attempt[];
}

const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * The only retry loop in the gateway: pick candidates for a capability, reserve their cost,
 * invoke, classify a failure, cool the vendor down, and move to the next candidate when that
 * is safe (idempotent capability, or a request that was never sent) and within the cost cap.
 */
export class Router {
  readonly cooldowns = new Cooldowns();

  constructor(
    private readonly registry: VendorRegistry,
    private readonly wallet: Wallet,
    private readonly capabilities: Map<string, CapabilitySpec>,
    private readonly markup: number,
    private readonly log: Logger,
  ) {}

  /** Instances serving a capability, in route order, filtered by pin, model and region. */
  candidates(capability: string, opts: Pick<CallOptions, 'vendor' | 'model' | 'region'> = {}): RegisteredInstance[] {
    let list = this.registry.serving(capability);
    if (opts.vendor) {
      list = list.filter((c) => c.id === opts.vendor || c.adapter === opts.vendor);
      if (!list.length) throw apiError('no_vendor_available', `No vendor "${opts.vendor}" serves ${capability}. Configured for it: ${this.registry.serving(capability).map((c) => c.id).join(', ') || 'none'}.`, { param: 'vendor' });
    }
    if (opts.model) list = list.filter((c) => servesModel(c.instance.capabilities[capability], opts.model!));
    if (opts.region) {
      const region = opts.region;
      const inRegion = list.filter((c) => region === 'auto' || c.regions.includes('global') || c.regions.includes(region));
      if (opts.vendor && list.length && !inRegion.length) throw apiError('region_not_allowed', `Vendor "${opts.vendor}" does not serve the account's region (${region}).`, { param: 'vendor' });
      list = inRegion;
    }
    return list;
  }

  available(capability: string): boolean {
    return this.registry.serving(capability).some((c) => !this.cooldowns.cooling(c.id));
  }

  async call<I, O>(capability: string, input: I, opts: CallOptions): Promise<CallResult<O>> {
    const spec = this.capabilities.get(capability) ?? { idempotent: false };
    let all = this.candidates(capability, opts);
    if (opts.order) all = opts.order.map((id) => all.find((c) => c.id === id)).filter((c): c is RegisteredInstance => !!c);
    if (!all.length) {
      throw apiError('no_vendor_available',
        `No vendor is configured for ${capability}${opts.model ? ` with model ${opts.model}` : ''}. Add one under \`vendors:\` in the config file (see docs/configuration.md)${capability.startsWith('ai.') ? ', or register your own key with POST /v1/byok' : ''}.`,
        { details: { capability } });
    }
    // Cooling vendors go last rather than away: if all are cooling, still try.
    const ordered = [...all.filter((c) => !this.cooldowns.cooling(c.id)), ...all.filter((c) => this.cooldowns.cooling(c.id))];
    const deadline = Date.now() + (opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const cap = opts.maxCostMultiplier ?? 1.5;
    const attempts: Attempt[] = [];
    let primaryEstimate: number | undefined;
    let lastKind: FailureKind | undefined;

    for (const cand of ordered) {
      const impl = cand.instance.capabilities[capability] as CapabilityImpl<I, O>;
      const estimate = this.charged(impl.price(input));
      if (primaryEstimate === undefined) primaryEstimate = estimate;
      else if (estimate > primaryEstimate * cap) {
        attempts.push({ vendor: cand.id, model: opts.model, status: 'skipped_cost_cap', latency_ms: 0 });
        continue;
      }
      if (Date.now() >= deadline) break;
      const hold = opts.charge === false ? null : await this.wallet.reserve(opts.accountId, estimate, capability);
      const ctrl = new AbortController();
      const onAbort = () => ctrl.abort(opts.signal?.reason);
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      const timer = setTimeout(() => ctrl.abort(new VendorFailure('timeout', `${cand.id} did not answer in time`)), Math.max(1, deadline - Date.now()));
      const started = performance.now();
      try {
        const output = await raceAbort(impl.invoke(input, { signal: ctrl.signal, accountId: opts.accountId, deadline }), ctrl.signal);
        const latency = Math.round(performance.now() - started);
        const cost = hold ? await this.wallet.settle(hold, this.charged(impl.price(input, output)), { vendor: cand.id, ref: opts.ref }) : 0;
        this.cooldowns.success(cand.id);
        attempts.push({ vendor: cand.id, model: opts.model, status: 'ok', latency_ms: latency });
        if (opts.meter) {
          opts.meter.metered = true;
          opts.meter.costMicros += cost;
          opts.meter.vendor = cand.id;
        }
        return { output, vendor: cand.id, costMicros: cost, latencyMs: latency, attempts };
      } catch (err) {
        const latency = Math.round(performance.now() - started);
        if (hold) await this.wallet.release(hold);
        if (opts.signal?.aborted) throw err; // the caller went away: no failover, nothing charged
        const kind = cand.instance.classify?.(err) ?? classifyGeneric(err);
        lastKind = kind;
        const message = err instanceof Error ? err.message : String(err);
        attempts.push({ vendor: cand.id, model: opts.model, status: kind, latency_ms: latency, error: { code: kind, message } });
        this.cooldowns.failure(cand.id, kind, err instanceof VendorFailure ? err.retryAfterMs : undefined);
        this.log.warn({ capability, vendor: cand.id, kind, latency_ms: latency, err: message }, 'vendor call failed');
        if (kind === 'client_error') throw apiError('vendor_error', `${cand.id} rejected the request: ${message}`, { details: { attempts } });
        if (!spec.idempotent && kind !== 'not_sent') break;
      } finally {
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
      }
    }
    if (lastKind === 'timeout' && attempts.filter((a) => a.status !== 'skipped_cost_cap').every((a) => a.status === 'timeout')) {
      throw apiError('vendor_timeout', `No vendor answered ${capability} in time.`, { details: { attempts } });
    }
    const tried = attempts.filter((a) => a.status !== 'skipped_cost_cap').length;
    throw apiError('vendor_error',
      tried ? `Every candidate vendor for ${capability} failed.` : `No candidate vendor for ${capability} is within the cost cap (max_cost_multiplier ${cap}).`,
      { details: { attempts } });
  }

  /** Vendor cost with the operator's markup, rounded up to the micro-USD. */
  private charged(vendorMicros: number): number {
    return Math.ceil(Math.max(0, vendorMicros) * this.markup);
  }
}

function servesModel(impl: CapabilityImpl | undefined, model: string): boolean {
  return !!impl && (!impl.models || impl.models.length === 0 || impl.models.includes(model));
}

/** Settle a promise as soon as the signal aborts, even if the adapter ignores the signal. */
function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then((v) => { signal.removeEventListener('abort', onAbort); resolve(v); },
      (e) => { signal.removeEventListener('abort', onAbort); reject(e); });
  });
}
