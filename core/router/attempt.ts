import type { Logger } from 'pino';
import type { AnyImpl } from '../vendor-api.js';
import type { AreaPrice, CapabilitySpec } from '../capability-spec.js';
import type { Step } from './step.js';

export type { Step } from './step.js';
import { assertPriced, costCap, DEFAULT_COST_MULTIPLIER, stepCharge, vendorMicros } from './pricing.js';
import type { Hold, Wallet } from '../wallet/wallet.js';
import { ApiError, apiError } from '../errors.js';
import { classifyGeneric, isGatewayFault, recipientRefusedOf, retryAfterOf, type FailureKind } from './failure.js';
import { credentialValues, failureText } from './scrub.js';
import type { VendorRegistry } from './registry.js';
import type { Cooldowns } from './cooldowns.js';
import type { CredentialsProvider } from './credentials.js';

export interface Attempt {
  vendor: string;
  model?: string;
  status: 'ok' | FailureKind | 'skipped_cost_cap';
  latency_ms: number;
  /** `recipient_refused`: the vendor's code when it refused the recipient for good (VendorFailure). */
  error?: { code: string; message: string; recipient_refused?: string };
}

export interface LoopDeps {
  registry: VendorRegistry;
  wallet: Wallet;
  cooldowns: Cooldowns;
  capabilities: Map<string, CapabilitySpec>;
  markup: number;
  log: Logger;
  provider?: CredentialsProvider;
}

export interface LoopOptions {
  accountId: string;
  model?: string;
  maxCostMultiplier?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
  charge?: boolean;
  /** Sort by estimate (routes.<capability>.strategy: cheapest) rather than keep the given order. */
  cheapest?: boolean;
  /** Told the time the call gives up by (the idempotency claim is kept that long). */
  onDeadline?: (deadline: number) => void;
  /** The area's price, for a capability it prices (`router.price`); else each adapter's price(). */
  areaPrice?: AreaPrice;
}

/** What an attempt is given: its candidate, the abort it must honour, and its share of the time. */
export interface AttemptContext {
  accountId: string;
  step: Step;
  impl: AnyImpl;
  /** This step's cost before the markup: without output the estimate, with it (a stream's usage) the settled. */
  vendorMicros(output?: unknown): number;
  ctrl: AbortController;
  hold: Hold | null;
  /** Micro-USD reserved: marked-up vendor estimate plus the fee. */
  estimate: number;
  deadline: number;
  /** Ms this attempt may take before the next candidate's turn (calls; a stream has its first-event timeout). */
  budgetMs: number;
  started: number;
  attempts: Attempt[];
  /** Runs when the attempt is over: at once on failure, when the caller is done on success. */
  cleanup: Array<() => void>;
  /** Every secret a vendor's text is scrubbed of: the configured ones and this call's caller credentials. */
  secrets: string[];
}

/** How one kind of call (a plain call, a stream) makes an attempt and turns its success into a result. */
export interface AttemptKind<S, R> {
  /** Resolves once the attempt counts as succeeded (answered; first event arrived). */
  start(a: AttemptContext): Promise<S>;
  /** After success, outside the failover: settle, record, hand back. */
  finish(a: AttemptContext, s: S): Promise<R>;
  /** The vendor_timeout text when every tried candidate timed out. */
  timeoutText(capability: string, tried: Attempt[]): string;
}

const DEFAULT_TIMEOUT_MS = 60_000;
/** The kinds that say the vendor refused the call before acting: safe to send elsewhere, idempotent or not. */
const REFUSED_UNACTED = new Set<FailureKind>(['not_sent', 'rate_limited', 'quota', 'auth']);
/** Time kept back for each candidate after this one, so a hung vendor cannot eat the failover. */
const FAILOVER_RESERVE_MS = 10_000;

/**
 * An attempt's share of the time left: all of it when nothing may follow; otherwise all but
 * a reserve for each later candidate, and never less than an even split (short deadlines).
 */
function attemptBudget(remainingMs: number, candidatesLeft: number): number {
  if (candidatesLeft <= 1) return Math.max(1, remainingMs);
  const reserved = remainingMs - (candidatesLeft - 1) * FAILOVER_RESERVE_MS;
  return Math.max(1, Math.floor(Math.max(remainingMs / candidatesLeft, reserved)));
}

/** The key a candidate's cooldown is kept under: a caller's own key cools down for that caller alone. */
export function cooldownKey(deps: Pick<LoopDeps, 'provider'>, accountId: string, step: Step): string {
  return step.byok && deps.provider ? `${step.cand.id}|${deps.provider.cooldownScope(accountId)}` : step.cand.id;
}

/**
 * The gateway's one selection-to-failover loop, for calls and streams alike: estimate each
 * candidate (markup, fee), order by cooldown (and price when the route says cheapest), skip
 * those past the cost cap, reserve, attempt, classify a failure, cool the vendor down and move
 * on when that is safe (an idempotent capability, or a request that was never sent).
 */
export async function runAttempts<S, R>(
  deps: LoopDeps,
  capability: string,
  input: unknown,
  steps: Step[],
  opts: LoopOptions,
  kind: AttemptKind<S, R>
): Promise<R> {
  const spec = deps.capabilities.get(capability) ?? { idempotent: false };
  const { areaPrice } = opts;
  assertPriced(spec, capability, areaPrice);
  const implOf = (s: Step) => s.cand.instance.capabilities[capability] as AnyImpl;
  const estimate = new Map<Step, number>();
  for (const step of steps) estimate.set(step, stepCharge(deps.markup, { areaPrice, impl: implOf(step), step, input }));
  const sorted = opts.cheapest ? [...steps].sort((a, b) => estimate.get(a)! - estimate.get(b)!) : steps;
  // Cooling vendors go last rather than away: if all are cooling, still try.
  const cooling = (s: Step) => deps.cooldowns.cooling(cooldownKey(deps, opts.accountId, s));
  const ordered = orderByCooldown(sorted, cooling);
  const cap = opts.maxCostMultiplier ?? DEFAULT_COST_MULTIPLIER;
  const estimates = ordered.map((s) => estimate.get(s)!);
  const withinCap = costCap(estimates, cap);
  const deadline = Date.now() + (opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  opts.onDeadline?.(deadline);
  // Only a failure's text is scrubbed: built on the first one that needs it, not on every call.
  let secrets: string[] | undefined;
  const secretsOf = () =>
    (secrets ??= [...deps.registry.secrets(), ...credentialValues(...steps.map((s) => s.byok?.credentials))]);
  const signal = opts.signal;
  const attempts: Attempt[] = [];

  for (const [i, step] of ordered.entries()) {
    const id = step.cand.id;
    if (!withinCap[i]) {
      attempts.push({ vendor: id, model: opts.model, status: 'skipped_cost_cap', latency_ms: 0 });
      continue;
    }
    if (signal?.aborted) throw signal.reason;
    const remaining = deadline - Date.now();
    if (remaining <= 0) break;
    const hold =
      opts.charge === false ? null : await deps.wallet.reserve(opts.accountId, estimates[i], capability, deadline);
    // Gone while the hold was taken (a slow database): the listener below would never hear it.
    if (signal?.aborted) {
      if (hold) await deps.wallet.release(hold);
      throw signal.reason;
    }
    const left = spec.idempotent ? withinCap.slice(i).filter(Boolean).length : 1;
    const ctrl = new AbortController();
    const onAbort = () => ctrl.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    const a: AttemptContext = {
      accountId: opts.accountId,
      step,
      impl: implOf(step),
      vendorMicros: (output?: unknown) => vendorMicros({ areaPrice, impl: implOf(step), step, input, output }),
      ctrl,
      hold,
      estimate: estimates[i],
      deadline,
      budgetMs: attemptBudget(remaining, left),
      started: performance.now(),
      attempts,
      get secrets() {
        return secretsOf();
      },
      cleanup: [() => signal?.removeEventListener('abort', onAbort)],
    };
    let started: S;
    try {
      started = await kind.start(a);
    } catch (err) {
      for (const c of a.cleanup) c();
      if (!ctrl.signal.aborted) ctrl.abort(err);
      const latency = Math.round(performance.now() - a.started);
      const ownFault = isGatewayFault(err) || (err instanceof ApiError && err.status < 500);
      const failure = ownFault ? undefined : (step.cand.instance.classify?.(err) ?? classifyGeneric(err));
      // An embedded engine (in this process, on the caller's own page, template or PDF) kept busy
      // until the deadline: the time was the caller's doing, so the call is charged what was
      // reserved for it (an account cannot hold an engine for free), and the engine, healthy for
      // everyone else, is not cooled down; nor is a second engine tried (and charged) for it.
      const ranOut = failure === 'timeout' && step.cand.def.embedded === true && !signal?.aborted;
      if (hold) await (ranOut ? deps.wallet.settle(hold, a.estimate, { vendor: id }) : deps.wallet.release(hold));
      if (signal?.aborted) throw err; // the caller went away: no failover, nothing charged
      // The gateway's own exception is not the vendor's: no cooldown, no failover, a 500.
      // A caller's error the core itself raised inside the call (the egress guard refusing an
      // address a page asked for, through a fetcher the area handed the adapter): the caller
      // hears the core's own 4xx; the vendor did nothing wrong, so no cooldown and no failover.
      if (!failure) throw err;
      const { shown, logged } = failureText(err, secretsOf());
      attempts.push({
        vendor: id,
        model: opts.model,
        status: failure,
        latency_ms: latency,
        error: { code: failure, message: shown, ...refusal(err) },
      });
      if (!ranOut) deps.cooldowns.failure(cooldownKey(deps, opts.accountId, step), failure, retryAfterOf(err));
      // The caller's key refused: invalidated before the caller hears of it.
      if (failure === 'auth' && step.byok && deps.provider)
        await deps.provider.invalidate(opts.accountId, id, step.byok.credentials, failure);
      deps.log.warn({ capability, vendor: id, kind: failure, latency_ms: latency, err: logged }, 'vendor call failed');
      // The request itself is wrong: another vendor would say the same, and a retry will too.
      // A request over the vendor's size cap (HTTP 413, or an engine's own cap) is the caller's 413.
      if (failure === 'client_error') {
        const code = (err as { status?: unknown }).status === 413 ? 'payload_too_large' : 'unprocessable';
        throw apiError(code, `${id} rejected the request: ${shown}`, { details: { attempts } });
      }
      // A vendor that may have acted must not be doubled by a second one; one that refused the call (never
      // sent, its rate limit, its quota, our credentials) did not act, so the next may serve it.
      if (ranOut || (!spec.idempotent && !REFUSED_UNACTED.has(failure))) break;
      continue;
    }
    deps.cooldowns.success(cooldownKey(deps, opts.accountId, step));
    attempts.push({
      vendor: id,
      model: opts.model,
      status: 'ok',
      latency_ms: Math.round(performance.now() - a.started),
    });
    return kind.finish(a, started);
  }
  throw allFailed(capability, attempts, cap, kind);
}

function refusal(err: unknown): { recipient_refused?: string } {
  const code = recipientRefusedOf(err);
  return code === undefined ? {} : { recipient_refused: code };
}

/** The steps not cooling down, then the cooling ones, each group in its order (one pass, no copy when none cools). */
function orderByCooldown(steps: Step[], cooling: (s: Step) => boolean): Step[] {
  let cool: Step[] | undefined;
  let warm: Step[] | undefined;
  for (let i = 0; i < steps.length; i++) {
    if (cooling(steps[i])) {
      warm ??= steps.slice(0, i);
      (cool ??= []).push(steps[i]);
    } else warm?.push(steps[i]);
  }
  return cool ? [...warm!, ...cool] : steps;
}

function allFailed(capability: string, attempts: Attempt[], cap: number, kind: AttemptKind<unknown, unknown>) {
  const tried = attempts.filter((a) => a.status !== 'skipped_cost_cap');
  if (tried.length && tried.every((a) => a.status === 'timeout')) {
    return apiError('vendor_timeout', kind.timeoutText(capability, tried), { details: { attempts } });
  }
  const skipped = attempts.length - tried.length;
  const who = tried.map((a) => a.vendor).join(', ') || 'The primary vendor';
  const message = skipped
    ? `${who} failed for ${capability}, and no candidate within the cost cap is left `
      + `(max_cost_multiplier ${cap}; ${skipped} skipped).`
    : `Every candidate vendor for ${capability} failed.`;
  return apiError('vendor_error', message, { details: { attempts } });
}
