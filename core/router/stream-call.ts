import type { Logger } from 'pino';
import type { CapabilityImpl, CapabilitySpec } from '../define.js';
import type { Wallet, Hold } from '../wallet/wallet.js';
import { apiError } from '../errors.js';
import { classifyGeneric, retryAfterOf, VendorFailure, type FailureKind } from './failure.js';
import { failureText } from './scrub.js';
import type { VendorRegistry } from './registry.js';
import type { Cooldowns } from './cooldowns.js';
import { noVendor } from './no-vendor.js';
import { cooldownKey, recordFailure, type Attempt, type CallOptions } from './router.js';

export interface StreamDeps {
  registry: VendorRegistry;
  wallet: Wallet;
  cooldowns: Cooldowns;
  capabilities: Map<string, CapabilitySpec>;
  markup: number;
  log: Logger;
}

export interface StreamCallOptions extends CallOptions {
  /** Give up on a candidate that has sent nothing after this long and try the next. */
  firstEventTimeoutMs: number;
}

/** A stream that has produced its first event: from here on it is this vendor's or an error. */
export interface StreamSession<E, U> {
  vendor: string;
  attempts: Attempt[];
  first: E;
  /** The events after the first; throws on a vendor failure, the deadline, or the caller's abort. */
  rest: AsyncIterator<E>;
  /** Aborts the vendor call (client gone); the iterator then ends with the signal's reason. */
  signal: AbortSignal;
  /** Charge for the usage produced (once); releases nothing more. Returns micro-USD charged. */
  settle(usage: U): Promise<number>;
  close(): void;
}

/**
 * Streaming counterpart of Router.call for capabilities whose invoke returns an async
 * iterable. Failover happens only before the first event: a candidate that fails, or
 * stays silent past `firstEventTimeoutMs`, is released, classified, cooled down and the next
 * one (within the cost cap) is tried. Once an event has arrived the caller owns the stream.
 * `price(input, usage)` of the capability gives the settled cost.
 */
export async function streamCall<I, E, U>(deps: StreamDeps, capability: string, input: I, opts: StreamCallOptions): Promise<StreamSession<E, U>> {
  const signal = opts.signal ?? opts.meter?.signal;
  // An `order` was chosen by a planner that has applied routes and pins itself.
  let all = opts.order ? deps.registry.configured(capability) : deps.registry.serving(capability);
  if (opts.order) all = opts.order.map((id) => all.find((c) => c.id === id)).filter((c): c is (typeof all)[number] => !!c);
  if (!all.length) throw noVendor({ capability });
  const cooling = (id: string) => deps.cooldowns.cooling(cooldownKey(opts, id));
  const ordered = [...all.filter((c) => !cooling(c.id)), ...all.filter((c) => cooling(c.id))];
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  opts.meter?.onDeadline?.(deadline);
  const cap = opts.maxCostMultiplier ?? 1.5;
  const charged = (micros: number) => Math.ceil(Math.max(0, micros) * deps.markup);
  const attempts: Attempt[] = [];
  let primary: number | undefined;
  let lastKind: FailureKind | undefined;

  for (const cand of ordered) {
    const impl = cand.instance.capabilities[capability] as CapabilityImpl<I, AsyncIterable<E>> & { price(input: I, usage?: U, plan?: unknown): number };
    const fee = opts.fees?.[cand.id] ?? 0; // charged as it is (CallOptions.fees)
    const plan = opts.plans?.[cand.id]; // this candidate's own, never another's
    const estimate = charged(impl.price(input, undefined, plan)) + fee;
    if (primary === undefined) primary = estimate;
    else if (estimate > primary * cap) {
      attempts.push({ vendor: cand.id, status: 'skipped_cost_cap', latency_ms: 0 });
      continue;
    }
    if (Date.now() >= deadline) break;
    if (signal?.aborted) throw signal.reason;
    const hold: Hold | null = opts.charge === false ? null : await deps.wallet.reserve(opts.accountId, estimate, capability, deadline);
    const ctrl = new AbortController();
    const onAbort = () => ctrl.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    const whole = setTimeout(() => ctrl.abort(new VendorFailure('timeout', `${cand.id} did not finish in time`)), Math.max(1, deadline - Date.now()));
    const firstMs = Math.max(1, Math.min(opts.firstEventTimeoutMs, deadline - Date.now()));
    const started = performance.now();
    let firstTimer: NodeJS.Timeout | undefined;
    const cleanup = () => {
      clearTimeout(whole);
      clearTimeout(firstTimer);
      signal?.removeEventListener('abort', onAbort);
    };
    try {
      const first = await new Promise<{ it: AsyncIterator<E>; value: E }>((resolve, reject) => {
        const fail = () => reject(ctrl.signal.reason);
        ctrl.signal.addEventListener('abort', fail, { once: true });
        firstTimer = setTimeout(() => ctrl.abort(new VendorFailure('timeout', `${cand.id} sent nothing within ${firstMs} ms`)), firstMs);
        (async () => {
          const iterable = await impl.invoke(input, { signal: ctrl.signal, accountId: opts.accountId, deadline, plan });
          const it = iterable[Symbol.asyncIterator]();
          const r = await it.next();
          if (r.done) throw new VendorFailure('unavailable', `${cand.id} ended the stream without sending anything`);
          return { it, value: r.value };
        })().then(resolve, reject).finally(() => ctrl.signal.removeEventListener('abort', fail));
      });
      clearTimeout(firstTimer);
      deps.cooldowns.success(cooldownKey(opts, cand.id));
      attempts.push({ vendor: cand.id, status: 'ok', latency_ms: Math.round(performance.now() - started) });
      let settled = false;
      return {
        vendor: cand.id, attempts, first: first.value, signal: ctrl.signal,
        rest: scrubbed(first.it, [...deps.registry.secrets(), ...(opts.secrets ?? [])]),
        async settle(usage: U) {
          if (settled || !hold) return 0;
          settled = true;
          const cost = await deps.wallet.settle(hold, charged(impl.price(input, usage, plan)) + fee, { vendor: cand.id, ref: opts.ref });
          if (opts.meter) {
            opts.meter.metered = true;
            opts.meter.costMicros += cost;
            opts.meter.vendor = cand.id;
          }
          return cost;
        },
        close() {
          cleanup();
          if (!ctrl.signal.aborted) ctrl.abort(new Error('stream closed'));
        },
      };
    } catch (err) {
      cleanup();
      if (!ctrl.signal.aborted) ctrl.abort(err);
      const latency = Math.round(performance.now() - started);
      if (hold) await deps.wallet.release(hold);
      if (signal?.aborted) throw err;
      const { kind, shown, logged } = recordFailure(deps.registry, cand, err, opts);
      lastKind = kind;
      attempts.push({ vendor: cand.id, status: kind, latency_ms: latency, error: { code: kind, message: shown } });
      deps.cooldowns.failure(cooldownKey(opts, cand.id), kind, retryAfterOf(err));
      await opts.onFailure?.(cand.id, kind);
      deps.log.warn({ capability, vendor: cand.id, kind, latency_ms: latency, err: logged },
        'vendor stream failed before the first event');
      // The request itself is wrong: another vendor would say the same (as Router.call).
      if (kind === 'client_error') {
        throw apiError('unprocessable', `${cand.id} rejected the request: ${shown}`, { details: { attempts } });
      }
      const spec = deps.capabilities.get(capability) ?? { idempotent: false };
      if (!spec.idempotent && kind !== 'not_sent') break;
    }
  }
  if (lastKind === 'timeout' && attempts.filter((a) => a.status !== 'skipped_cost_cap').every((a) => a.status === 'timeout')) {
    throw apiError('vendor_timeout', `No vendor started streaming ${capability} in time.`, { details: { attempts } });
  }
  const tried = attempts.filter((a) => a.status !== 'skipped_cost_cap').length;
  throw apiError('vendor_error',
    tried ? `Every candidate vendor for ${capability} failed.` : `No candidate vendor for ${capability} is within the cost cap (max_cost_multiplier ${cap}).`,
    { details: { attempts } });
}

/**
 * The events after the first, with a vendor's failure mid-stream scrubbed as one before it
 * (recordFailure): the caller writes its text into the stream's error event and the log.
 */
function scrubbed<E>(it: AsyncIterator<E>, secrets: string[]): AsyncIterator<E> {
  return {
    async next() {
      try {
        return await it.next();
      } catch (err) {
        const { shown } = failureText(err, secrets);
        throw new VendorFailure(classifyGeneric(err), shown, { status: (err as { status?: number })?.status });
      }
    },
    return: it.return && ((v?: unknown) => it.return!(v)),
  };
}
