import type { Logger } from 'pino';
import type { CapabilitySpec, CapabilityImpl } from '../define.js';
import type { Wallet } from '../wallet/wallet.js';
import { apiError } from '../errors.js';
import { classifyGeneric, isGatewayFault, retryAfterOf, VendorFailure, type FailureKind } from './failure.js';
import { failureText } from './scrub.js';
import type { VendorRegistry, RegisteredInstance } from './registry.js';
import { Cooldowns } from './cooldowns.js';
import { noVendor } from './no-vendor.js';

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
  /** Aborts when the client goes away before the response is sent: the call is cancelled. */
  signal?: AbortSignal;
  /**
   * Told when a vendor call starts, with the time it gives up by: the request's idempotency
   * claim is kept at least that long (core/http/idempotency.ts).
   */
  onDeadline?: (deadline: number) => void;
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
  /**
   * Per instance id, the plan the area's planner gave it (model, prices, the caller's key for
   * it). Each adapter is handed its own in InvokeOptions.plan and price(), never another's.
   */
  plans?: Record<string, unknown>;
  /**
   * A fee of the gateway's own per instance id, in micro-USD, charged as it is on top of the
   * vendor cost: BYOK's platform fee, which the operator's markup on vendor prices must not
   * multiply.
   */
  fees?: Record<string, number>;
  /**
   * Per instance id, a scope its cooldown is kept under (`id|scope`): a failure with a
   * caller's own credentials (BYOK) says nothing about the operator's key on the same
   * instance, and must not send other accounts' calls elsewhere.
   */
  cooldownScope?: Record<string, string>;
  /**
   * Told of each failed attempt once it is classified, and awaited before the next one (the
   * AI area invalidates a BYOK key the vendor refused, before the caller hears of it). Must
   * not throw.
   */
  onFailure?: (instanceId: string, kind: FailureKind) => void | Promise<void>;
  /**
   * The call's own secrets (a caller's BYOK credentials), scrubbed from vendor text with the
   * configured ones before a failure is logged or returned.
   */
  secrets?: string[];
}

/** A failed attempt as the router records it: classified, with its scrubbed text. */
export interface RecordedFailure {
  kind: FailureKind;
  /** Scrubbed and bounded: what responses carry. */
  shown: string;
  /** Scrubbed: what the log carries. */
  logged: string;
}

/**
 * Classify a failed attempt and scrub its text, the one place vendor text passes on its way
 * to a response or a log. The gateway's own exception (isGatewayFault) is thrown as it is:
 * not the vendor's, so no cooldown and no failover, and the caller gets a 500.
 */
export function recordFailure(registry: VendorRegistry, cand: RegisteredInstance, err: unknown,
  opts: Pick<CallOptions, 'secrets'>): RecordedFailure {
  if (isGatewayFault(err)) throw err;
  const kind = cand.instance.classify?.(err) ?? classifyGeneric(err);
  return { kind, ...failureText(err, [...registry.secrets(), ...(opts.secrets ?? [])]) };
}

/** The key a candidate's cooldown is kept under (CallOptions.cooldownScope). */
export function cooldownKey(opts: Pick<CallOptions, 'cooldownScope'>, id: string): string {
  const scope = opts.cooldownScope?.[id];
  return scope ? `${id}|${scope}` : id;
}

export interface CallResult<O> {
  output: O;
  vendor: string;
  costMicros: number;
  latencyMs: number;
  attempts: Attempt[];
}

const DEFAULT_TIMEOUT_MS = 60_000;
/** Time kept back for each candidate after this one, so a hung vendor cannot eat the failover. */
const FAILOVER_RESERVE_MS = 10_000;

/**
 * An attempt's share of the time left: all of it when nothing may follow; otherwise all but
 * a reserve for each later candidate, and never less than an even split (short deadlines).
 */
function attemptBudget(remainingMs: number, candidatesLeft: number): number {
  if (candidatesLeft <= 1) return Math.max(1, remainingMs);
  return Math.max(1, Math.floor(Math.max(remainingMs / candidatesLeft, remainingMs - (candidatesLeft - 1) * FAILOVER_RESERVE_MS)));
}

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
  candidates(capability: string, opts: Pick<CallOptions, 'vendor' | 'model' | 'region' | 'order'> = {}): RegisteredInstance[] {
    // BYOK-only instances take part only where a planner names them (it knows the caller's keys).
    // A pin picks among every configured instance: `routes` orders and limits automatic routing
    // only. An `order` was chosen by a planner that has applied routes and pins itself.
    const pool = opts.vendor || opts.order ? this.registry.configured(capability) : this.registry.serving(capability);
    let list = pool.filter((c) => !c.byokOnly || opts.order?.includes(c.id));
    if (opts.vendor) {
      list = list.filter((c) => c.id === opts.vendor || c.adapter === opts.vendor);
      const configured = pool.map((c) => c.id);
      if (!list.length) throw noVendor({ capability, vendor: opts.vendor, configured });
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
    return this.registry.serving(capability).some((c) => !c.byokOnly && !this.cooldowns.cooling(c.id));
  }

  async call<I, O>(capability: string, input: I, opts: CallOptions): Promise<CallResult<O>> {
    // A metered call says what it cost even when it fails (0, and the balance).
    if (opts.meter) opts.meter.metered = true;
    const signal = opts.signal ?? opts.meter?.signal;
    const spec = this.capabilities.get(capability) ?? { idempotent: false };
    let all = this.candidates(capability, opts);
    if (opts.order) all = opts.order.map((id) => all.find((c) => c.id === id)).filter((c): c is RegisteredInstance => !!c);
    if (!all.length) throw noVendor({ capability, model: opts.model, region: opts.region });
    const fee = (id: string) => opts.fees?.[id] ?? 0;
    const planOf = (id: string) => opts.plans?.[id];
    const estimate = new Map(all.map((c) => {
      const impl = c.instance.capabilities[capability] as CapabilityImpl<I, O>;
      return [c.id, this.charged(c.id, impl.price(input, undefined, planOf(c.id))) + fee(c.id)];
    }));
    if (!opts.order && this.registry.strategy(capability) === 'cheapest') all = [...all].sort((a, b) => estimate.get(a.id)! - estimate.get(b.id)!);
    // Cooling vendors go last rather than away: if all are cooling, still try.
    const cooling = (id: string) => this.cooldowns.cooling(cooldownKey(opts, id));
    const ordered = [...all.filter((c) => !cooling(c.id)), ...all.filter((c) => cooling(c.id))];
    const cap = opts.maxCostMultiplier ?? 1.5;
    const estimates = ordered.map((c) => estimate.get(c.id)!);
    const withinCap = ordered.map((_, i) => i === 0 || estimates[i] <= estimates[0] * cap);
    const deadline = Date.now() + (opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    opts.meter?.onDeadline?.(deadline);
    const attempts: Attempt[] = [];

    for (const [i, cand] of ordered.entries()) {
      if (!withinCap[i]) {
        attempts.push({ vendor: cand.id, model: opts.model, status: 'skipped_cost_cap', latency_ms: 0 });
        continue;
      }
      if (signal?.aborted) throw signal.reason;
      const remaining = deadline - Date.now();
      if (remaining <= 0) break;
      const impl = cand.instance.capabilities[capability] as CapabilityImpl<I, O>;
      const hold = opts.charge === false ? null : await this.wallet.reserve(opts.accountId, estimates[i], capability, deadline);
      const left = spec.idempotent ? withinCap.slice(i).filter(Boolean).length : 1;
      const ctrl = new AbortController();
      const onAbort = () => ctrl.abort(signal?.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      const timer = setTimeout(() => ctrl.abort(new VendorFailure('timeout', `${cand.id} did not answer in time`)), attemptBudget(remaining, left));
      const started = performance.now();
      let output: O;
      try {
        const invokeOpts = { signal: ctrl.signal, accountId: opts.accountId, deadline, plan: planOf(cand.id) };
        output = await raceAbort(impl.invoke(input, invokeOpts), ctrl.signal);
      } catch (err) {
        const latency = Math.round(performance.now() - started);
        if (hold) await this.wallet.release(hold);
        if (signal?.aborted) throw err; // the caller went away: no failover, nothing charged
        const { kind, shown, logged } = recordFailure(this.registry, cand, err, opts);
        const error = { code: kind, message: shown };
        attempts.push({ vendor: cand.id, model: opts.model, status: kind, latency_ms: latency, error });
        this.cooldowns.failure(cooldownKey(opts, cand.id), kind, retryAfterOf(err));
        await opts.onFailure?.(cand.id, kind);
        this.log.warn({ capability, vendor: cand.id, kind, latency_ms: latency, err: logged }, 'vendor call failed');
        // The request itself is wrong: another vendor would say the same, and a retry will too.
        if (kind === 'client_error') {
          throw apiError('unprocessable', `${cand.id} rejected the request: ${shown}`, { details: { attempts } });
        }
        // A vendor that may have acted must not be doubled by a second one.
        if (!spec.idempotent && kind !== 'not_sent') break;
        continue;
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      }
      const latency = Math.round(performance.now() - started);
      this.cooldowns.success(cooldownKey(opts, cand.id));
      // Outside the try: a failure to record the charge must not send the call to a second vendor.
      const cost = hold ? await this.wallet.settle(hold, this.actualCharge(cand.id, impl, input, output, planOf(cand.id), estimates[i] - fee(cand.id)) + fee(cand.id), { vendor: cand.id, ref: opts.ref }) : 0;
      attempts.push({ vendor: cand.id, model: opts.model, status: 'ok', latency_ms: latency });
      if (opts.meter) {
        opts.meter.costMicros += cost;
        opts.meter.vendor = cand.id;
      }
      return { output, vendor: cand.id, costMicros: cost, latencyMs: latency, attempts };
    }
    throw this.allFailed(capability, attempts, cap);
  }

  private allFailed(capability: string, attempts: Attempt[], cap: number) {
    const tried = attempts.filter((a) => a.status !== 'skipped_cost_cap');
    if (tried.length && tried.every((a) => a.status === 'timeout')) {
      return apiError('vendor_timeout', `No vendor answered ${capability} in time (${tried.map((a) => a.vendor).join(', ')}).`, { details: { attempts } });
    }
    const skipped = attempts.length - tried.length;
    const message = skipped
      ? `${tried.map((a) => a.vendor).join(', ') || 'The primary vendor'} failed for ${capability}, and no candidate within the cost cap is left (max_cost_multiplier ${cap}; ${skipped} skipped).`
      : `Every candidate vendor for ${capability} failed.`;
    return apiError('vendor_error', message, { details: { attempts } });
  }

  /** Vendor cost with the operator's markup, rounded up to the micro-USD. */
  private charged(vendor: string, vendorMicros: number): number {
    // A NaN would reach the wallet's arithmetic; this is a bug in the adapter, not the caller's.
    if (typeof vendorMicros !== 'number' || !Number.isFinite(vendorMicros)) throw new Error(`vendor ${vendor}: price() returned ${String(vendorMicros)}, not a number of micro-USD`);
    return Math.ceil(Math.max(0, vendorMicros) * this.markup);
  }

  /** What the answered call costs; if the adapter cannot say, what was reserved for it. */
  private actualCharge<I, O>(vendor: string, impl: CapabilityImpl<I, O>, input: I, output: O, plan: unknown, reserved: number): number {
    try {
      return this.charged(vendor, impl.price(input, output, plan));
    } catch (err) {
      this.log.error({ vendor, err }, 'price() failed after the vendor answered; charging the reserved estimate');
      return reserved;
    }
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
