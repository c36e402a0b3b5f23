import type { Logger } from 'pino';
import type { CapabilityImpl } from '../vendor-api.js';
import type { CapabilitySpec } from '../capability-spec.js';
import type { Wallet } from '../wallet/wallet.js';
import { VendorFailure } from './failure.js';
import type { VendorRegistry, RegisteredInstance } from './registry.js';
import { Cooldowns } from './cooldowns.js';
import { noVendor } from './no-vendor.js';
import type { Credentials, CredentialsProvider } from './credentials.js';
import type { Planned, Planner, PlannerOptions, Routed } from './planner.js';
import { planCandidates, selectCandidates, type Selection } from './candidates.js';
import {
  charged,
  runAttempts,
  type Attempt,
  type AttemptContext,
  type AttemptKind,
  type LoopDeps,
  type Step,
} from './attempt.js';
import { streamAttempt, type StreamSession } from './stream.js';
import type { Meter } from './meter.js';

export type { Attempt } from './attempt.js';
export type { Meter } from './meter.js';

export interface CallOptions<Q = unknown> extends Selection {
  accountId: string;
  /** Failover only to candidates whose estimate is within this × the primary's (default 1.5). */
  maxCostMultiplier?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
  meter?: Meter;
  /** Reference stored on the ledger entry (a record id). */
  ref?: string;
  /** Charge the wallet (default true). */
  charge?: boolean;
  /**
   * The candidates, already planned (`router.plan`, or a stored plan), in the order to try:
   * each adapter is handed its own `plan` alone. Without it the capability's planner plans
   * the call from `request`, or, without a planner, the route's instances are tried as they are.
   */
  route?: Array<Routed<Planned>>;
  /** The area's planning input, for its planner. */
  request?: Q;
}

export interface StreamOptions<Q = unknown> extends CallOptions<Q> {
  /** Give up on a candidate that has sent nothing after this long and try the next. */
  firstEventTimeoutMs: number;
}

export interface CallResult<O> {
  output: O;
  vendor: string;
  costMicros: number;
  latencyMs: number;
  attempts: Attempt[];
}

/**
 * The only selection and retry loop in the gateway, for calls (`call`) and streams (`stream`):
 * pick candidates for a capability (pin, route, region, the area's planner hook, callers' own
 * credentials first), reserve their cost, invoke each with its own plan, classify a failure,
 * cool the vendor down, and move to the next candidate when that is safe and within the cost cap.
 */
export class Router {
  readonly cooldowns = new Cooldowns();
  private readonly planners = new Map<string, { planner: Planner; opts: PlannerOptions }>();
  private provider?: CredentialsProvider;

  constructor(
    private readonly registry: VendorRegistry,
    private readonly wallet: Wallet,
    private readonly capabilities: Map<string, CapabilitySpec>,
    private readonly markup: number,
    private readonly log: Logger
  ) {}

  /** An area's planner for a capability: it orders the candidates and gives each its plan. */
  planner<Q, C extends Planned>(capability: string, planner: Planner<Q, C>, opts: PlannerOptions = {}): void {
    if (this.planners.has(capability)) throw new Error(`capability ${capability} already has a planner`);
    this.planners.set(capability, { planner: planner as Planner, opts });
  }

  /** Where callers' own credentials come from (the byok area); consulted for planned calls. */
  credentials(provider: CredentialsProvider): void {
    if (this.provider) throw new Error('a credentials provider is already registered');
    this.provider = provider;
  }

  /**
   * Per instance id, the caller's own credentials it may use (none without a provider): for an
   * area that routes a stored plan again later (a batch stores no key and reads it here).
   */
  async callerCredentials(
    accountId: string,
    instances: readonly RegisteredInstance[]
  ): Promise<Map<string, Credentials>> {
    return this.provider && instances.length ? this.provider.credentials(accountId, instances) : new Map();
  }

  /** Instances serving a capability, in route order, filtered by pin, model and region (no planner). */
  candidates(capability: string, opts: Selection = {}): RegisteredInstance[] {
    return selectCandidates(this.registry, capability, opts);
  }

  /** What the capability's planner was registered with (docs, hint), for messages made outside a call. */
  plannerOptions(capability: string): PlannerOptions | undefined {
    return this.planners.get(capability)?.opts;
  }

  /**
   * The one no_vendor_available, with the planner's docs and hint, unless an instance serves the
   * capability for this selection: for an area to check before it fetches or charges anything.
   */
  assertServed(capability: string, sel: Selection = {}): void {
    if (this.candidates(capability, sel).length) return;
    throw noVendor({ capability, model: sel.model, region: sel.region, ...this.plannerOptions(capability) });
  }

  available(capability: string): boolean {
    return this.registry.serving(capability).some((c) => !c.byokOnly && !this.cooldowns.cooling(c.id));
  }

  /**
   * The candidates of a call with the capability's planner, in order, each with its plan and
   * BYOK use: what an area reads before the call (the models it will ask for), then passes as
   * `route`. Throws the one no_vendor_available when nothing is left.
   */
  async plan<Q, C extends Planned>(
    capability: string,
    opts: Selection & { accountId: string; request: Q }
  ): Promise<Array<Routed<C>>> {
    const p = this.planners.get(capability);
    if (!p) throw new Error(`capability ${capability} has no planner`);
    return planCandidates(this.registry, this.provider, capability, p.planner as Planner<Q, C>, p.opts, opts);
  }

  async call<I, O>(capability: string, input: I, opts: CallOptions): Promise<CallResult<O>> {
    // A metered call says what it cost even when it fails (0, and the balance).
    if (opts.meter) opts.meter.metered = true;
    const steps = await this.steps(capability, opts);
    return runAttempts(
      this.deps(),
      capability,
      input,
      steps,
      this.loopOptions(capability, opts),
      this.callAttempt<I, O>(input, opts)
    );
  }

  /**
   * A call whose invoke returns an async iterable: failover happens only before the first
   * event; once one has arrived the caller owns the stream and settles it with the usage.
   */
  async stream<I, E, U>(capability: string, input: I, opts: StreamOptions): Promise<StreamSession<E, U>> {
    const steps = await this.steps(capability, opts);
    const kind = streamAttempt<E, U>({ wallet: this.wallet, markup: this.markup }, input, {
      firstEventTimeoutMs: opts.firstEventTimeoutMs,
      ref: opts.ref,
      meter: opts.meter,
    });
    return runAttempts(this.deps(), capability, input, steps, this.loopOptions(capability, opts), kind);
  }

  private deps(): LoopDeps {
    const { registry, wallet, cooldowns, capabilities, markup, log, provider } = this;
    return { registry, wallet, cooldowns, capabilities, markup, log, provider };
  }

  private loopOptions(capability: string, opts: CallOptions) {
    const planned = !!opts.route || this.planners.has(capability);
    return {
      accountId: opts.accountId,
      model: opts.model,
      maxCostMultiplier: opts.maxCostMultiplier,
      timeoutMs: opts.timeoutMs,
      signal: opts.signal ?? opts.meter?.signal,
      charge: opts.charge,
      onDeadline: opts.meter?.onDeadline,
      // A planner's order is the order: the route's `cheapest` strategy orders unplanned calls only.
      cheapest: !planned && this.registry.strategy(capability) === 'cheapest',
    };
  }

  /** The candidates to try: a given route, else the planner's, else the route's instances. */
  private async steps(capability: string, opts: CallOptions): Promise<Step[]> {
    let route = opts.route;
    if (!route && this.planners.has(capability))
      route = await this.plan(capability, { ...opts, request: opts.request });
    if (!route) {
      const list = this.candidates(capability, opts);
      if (!list.length) throw noVendor({ capability, model: opts.model, region: opts.region });
      return list.map((cand) => ({ cand }));
    }
    const steps = route.flatMap((r) => {
      const cand = this.registry.get(r.id);
      return cand && capability in cand.instance.capabilities ? [{ cand, plan: r.plan, byok: r.byok }] : [];
    });
    if (!steps.length)
      throw noVendor({
        capability,
        model: opts.model,
        region: opts.region,
        docs: this.planners.get(capability)?.opts.docs,
        hint: this.planners.get(capability)?.opts.hint,
      });
    return steps;
  }

  private callAttempt<I, O>(input: I, opts: CallOptions): AttemptKind<O, CallResult<O>> {
    return {
      start: async (a: AttemptContext) => {
        const id = a.step.cand.id;
        const timer = setTimeout(
          () => a.ctrl.abort(new VendorFailure('timeout', `${id} did not answer in time`)),
          a.budgetMs
        );
        a.cleanup.push(() => clearTimeout(timer));
        const invokeOpts = {
          signal: a.ctrl.signal,
          accountId: opts.accountId,
          deadline: a.deadline,
          plan: a.step.plan,
        };
        return raceAbort((a.impl as CapabilityImpl<I, O>).invoke(input, invokeOpts), a.ctrl.signal);
      },
      finish: async (a, output) => {
        for (const c of a.cleanup) c();
        const { step, hold } = a;
        const latency = a.attempts.at(-1)!.latency_ms;
        const fee = step.byok?.fee ?? 0;
        // Outside the failover: a failure to record the charge must not send the call to a second vendor.
        const cost = hold
          ? await this.wallet.settle(hold, this.actualCharge(a, input, output, a.estimate - fee) + fee, {
              vendor: step.cand.id,
              ref: opts.ref,
            })
          : 0;
        if (opts.meter) {
          opts.meter.costMicros += cost;
          opts.meter.vendor = step.cand.id;
        }
        return { output, vendor: step.cand.id, costMicros: cost, latencyMs: latency, attempts: a.attempts };
      },
      timeoutText: (capability, tried) =>
        `No vendor answered ${capability} in time (${tried.map((t) => t.vendor).join(', ')}).`,
    };
  }

  /** What the answered call costs; if the adapter cannot say, what was reserved for it. */
  private actualCharge<I, O>(a: AttemptContext, input: I, output: O, reserved: number): number {
    const vendor = a.step.cand.id;
    try {
      return charged(this.markup, vendor, (a.impl as CapabilityImpl<I, O>).price(input, output, a.step.plan));
    } catch (err) {
      this.log.error({ vendor, err }, 'price() failed after the vendor answered; charging the reserved estimate');
      return reserved;
    }
  }
}

/** Settle a promise as soon as the signal aborts, even if the adapter ignores the signal. */
function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      }
    );
  });
}
