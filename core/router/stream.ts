import type { CapabilityImpl } from '../vendor-api.js';
import type { Wallet } from '../wallet/wallet.js';
import type { Meter } from './meter.js';
import { classifyGeneric, VendorFailure } from './failure.js';
import { failureText } from './scrub.js';
import type { Attempt, AttemptContext, AttemptKind } from './attempt.js';
import { charged } from './pricing.js';

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

interface First<E> {
  it: AsyncIterator<E>;
  value: E;
}

/**
 * A stream attempt: it succeeds when the first event arrives (a candidate silent past
 * `firstEventTimeoutMs` fails over like one that failed), and the caller settles later with
 * the usage produced, priced by the adapter's `price(input, usage, plan)` (or the area's price).
 */
export function streamAttempt<E, U>(
  deps: { wallet: Wallet; markup: number },
  input: unknown,
  opts: { firstEventTimeoutMs: number; ref?: string; meter?: Meter }
): AttemptKind<First<E>, StreamSession<E, U>> {
  return {
    start(a: AttemptContext) {
      const { ctrl, step } = a;
      const id = step.cand.id;
      const whole = setTimeout(
        () => ctrl.abort(new VendorFailure('timeout', `${id} did not finish in time`)),
        Math.max(1, a.deadline - Date.now())
      );
      const firstMs = Math.max(1, Math.min(opts.firstEventTimeoutMs, a.deadline - Date.now()));
      let firstTimer: NodeJS.Timeout | undefined;
      a.cleanup.push(
        () => clearTimeout(whole),
        () => clearTimeout(firstTimer)
      );
      const impl = a.impl as CapabilityImpl<unknown, AsyncIterable<E>>;
      return new Promise<First<E>>((resolve, reject) => {
        const fail = () => reject(ctrl.signal.reason);
        ctrl.signal.addEventListener('abort', fail, { once: true });
        firstTimer = setTimeout(
          () => ctrl.abort(new VendorFailure('timeout', `${id} sent nothing within ${firstMs} ms`)),
          firstMs
        );
        (async () => {
          const iterable = await impl.invoke(input, {
            signal: ctrl.signal,
            accountId: a.accountId,
            deadline: a.deadline,
            plan: step.plan,
            credentials: step.byok?.credentials,
          });
          const it = iterable[Symbol.asyncIterator]();
          const r = await it.next();
          if (r.done) throw new VendorFailure('unavailable', `${id} ended the stream without sending anything`);
          clearTimeout(firstTimer);
          return { it, value: r.value };
        })()
          .then(resolve, reject)
          .finally(() => ctrl.signal.removeEventListener('abort', fail));
      });
    },
    async finish(a, first) {
      const { ctrl, step, hold } = a;
      const fee = step.byok?.fee ?? 0;
      let settled = false;
      return {
        vendor: step.cand.id,
        attempts: a.attempts,
        first: first.value,
        signal: ctrl.signal,
        rest: scrubbed(first.it, a.secrets),
        async settle(usage: U) {
          if (settled || !hold) return 0;
          settled = true;
          const cost = await deps.wallet.settle(
            hold,
            charged(deps.markup, step.cand.id, a.vendorMicros(usage)) + fee,
            {
              vendor: step.cand.id,
              ref: opts.ref,
            },
            opts.meter?.charges
          );
          if (opts.meter) {
            opts.meter.metered = true;
            opts.meter.costMicros += cost;
            opts.meter.vendor = step.cand.id;
          }
          return cost;
        },
        close() {
          for (const c of a.cleanup) c();
          if (!ctrl.signal.aborted) ctrl.abort(new Error('stream closed'));
        },
      };
    },
    timeoutText: (capability) => `No vendor started streaming ${capability} in time.`,
  };
}

/**
 * The events after the first, with a vendor's failure mid-stream scrubbed as one before it:
 * the caller writes its text into the stream's error event and the log.
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
