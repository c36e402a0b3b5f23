import type { Logger } from 'pino';
import type { AnyImpl, CapabilityImpl } from '../vendor-api.js';
import type { AreaPrice, CapabilitySpec } from '../capability-spec.js';
import type { Wallet } from '../wallet/wallet.js';
import { VendorFailure } from './failure.js';
import type { VendorRegistry, RegisteredInstance } from './registry.js';
import { Cooldowns } from './cooldowns.js';
import { noVendor } from './no-vendor.js';
import type { Credentials, CredentialsProvider } from './credentials.js';
import type { Planned, Planner, PlannerOptions, Routed } from './planner.js';
import { planCandidates, selectCandidates, type Selection } from './candidates.js';
import { assertPriced, charged, reserveAhead, stepCharge, type Reservation, type ReserveOptions } from './pricing.js';
import { runAttempts, type Attempt, type AttemptContext, type AttemptKind, type LoopDeps } from './attempt.js';
import type { Step } from './step.js';
import { streamAttempt, type StreamSession } from './stream.js';
import type { Meter } from './meter.js';

export type { Attempt } from './attempt.js';
export type { Meter } from './meter.js';
export type { Reservation, ReserveOptions } from './pricing.js';

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
  /** Handed to the adapter (InvokeOptions.idempotencyKey): the same for every resend of one effect. */
  idempotencyKey?: string;
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
  private readonly prices = new Map<string, { price: AreaPrice; opts: PlannerOptions }>();
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

  /**
   * An area's price for a capability it prices (its spec says `areaPriced`: image, PDF), from its
   * config: the router reserves `price(input)` and settles `price(input, output)` whichever
   * instance answers, the markup added; on the caller's own key only the BYOK fee.
   */
  price<I, O>(capability: string, price: AreaPrice<I, O>, opts: PlannerOptions = {}): void {
    if (!this.capabilities.get(capability)?.areaPriced)
      throw new Error(`capability ${capability} is priced by its vendors, not its area`);
    if (this.prices.has(capability)) throw new Error(`capability ${capability} already has a price`);
    this.prices.set(capability, { price: price as AreaPrice, opts });
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
    return selectCandidates(this.registry, capability, opts, this.plannerOptions(capability));
  }

  /** What the capability's planner or price was registered with (docs, hint), for no_vendor_available. */
  plannerOptions(capability: string): PlannerOptions | undefined {
    return this.planners.get(capability)?.opts ?? this.prices.get(capability)?.opts;
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
   * `route`. An area-priced capability without a planner gets its instances as they are, each
   * with the caller's credentials for it (BYOK). Throws the one no_vendor_available when nothing is left.
   */
  async plan<Q, C extends Planned>(
    capability: string,
    opts: Selection & { accountId: string; request: Q }
  ): Promise<Array<Routed<C>>> {
    // An area-priced capability needs no planner: its instances as they are, the caller's keys first.
    const area = this.prices.get(capability);
    const p = this.planners.get(capability) ?? (area && { planner: asTheyAre, opts: area.opts });
    if (!p) throw new Error(`capability ${capability} has no planner`);
    return planCandidates(this.registry, this.provider, capability, p.planner as Planner<Q, C>, p.opts, opts);
  }

  /**
   * Reserve now for a call settled later (a batch, run from a job): the route priced as a call
   * prices it (markup, fee), the candidates past the cost cap left out, and one hold for the
   * dearest left, settled later with `charge`.
   */
  async reserve<I>(capability: string, input: I, opts: ReserveOptions): Promise<Reservation> {
    const steps = await this.steps(capability, { accountId: opts.accountId, route: opts.route });
    return reserveAhead(this.wallet, this.markup, this.areaPrice(capability), capability, input, steps, opts);
  }

  /** What an answered call of one planned candidate costs, as `call` settles it: markup and fee included. */
  charge<I, O>(capability: string, input: I, routed: Routed<Planned>, output: O): number {
    const cand = this.registry.get(routed.id);
    if (!cand || !(capability in cand.instance.capabilities))
      throw new Error(`vendor instance ${routed.id} does not serve ${capability}`);
    const step = { cand, plan: routed.plan, byok: routed.byok };
    const impl = cand.instance.capabilities[capability] as AnyImpl;
    return stepCharge(this.markup, { areaPrice: this.areaPrice(capability), impl, step, input, output });
  }

  private areaPrice(capability: string): AreaPrice | undefined {
    const price = this.prices.get(capability)?.price;
    assertPriced(this.capabilities.get(capability) ?? { idempotent: false }, capability, price);
    return price;
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
      areaPrice: this.prices.get(capability)?.price,
    };
  }

  /** The candidates to try: a given route, else the planner's, else the route's instances. */
  private async steps(capability: string, opts: CallOptions): Promise<Step[]> {
    let route = opts.route;
    if (!route && this.planners.has(capability))
      route = await this.plan(capability, { ...opts, request: opts.request });
    if (!route) {
      const list = this.candidates(capability, opts);
      if (!list.length)
        throw noVendor({ capability, model: opts.model, region: opts.region, ...this.plannerOptions(capability) });
      return list.map((cand) => ({ cand }));
    }
    const steps = route.flatMap((r) => {
      const cand = this.registry.get(r.id);
      return cand && capability in cand.instance.capabilities ? [{ cand, plan: r.plan, byok: r.byok }] : [];
    });
    if (!steps.length)
      throw noVendor({ capability, model: opts.model, region: opts.region, ...this.plannerOptions(capability) });
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
          credentials: a.step.byok?.credentials,
          idempotencyKey: opts.idempotencyKey,
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
          ? await this.wallet.settle(
              hold,
              this.actualCharge(a, output, a.estimate - fee) + fee,
              {
                vendor: step.cand.id,
                ref: opts.ref,
              },
              opts.meter?.charges
            )
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

  /** What the answered call costs; if its price cannot say, what was reserved for it. */
  private actualCharge<O>(a: AttemptContext, output: O, reserved: number): number {
    const vendor = a.step.cand.id;
    try {
      return charged(this.markup, vendor, a.vendorMicros(output));
    } catch (err) {
      this.log.error({ vendor, err }, 'the price failed after the vendor answered; charging the reserved estimate');
      return reserved;
    }
  }
}

/** The planner of a capability without one: every candidate offered, in order, with no plan. */
const asTheyAre: Planner = (_req, candidates) => candidates.map((c) => ({ id: c.instance.id }));

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
