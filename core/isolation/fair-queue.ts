import { apiError } from '../errors.js';

// A work queue fair per account as well as bounded per engine. One p-queue per engine served its
// jobs first come first served, so an account that queued 100 heavy jobs made every other account's
// single job wait behind all of them. Here each account has its own line and the free slots go to
// the accounts in turn (round robin), at most `perAccount` of one account's jobs run at once, and an
// account with `maxQueuedPerAccount` jobs already waiting is refused at once (429) instead of
// growing the queue without bound.

export interface FairQueueOptions {
  /** Jobs of all accounts running at once. */
  concurrency: number;
  /** Jobs of one account running at once (default: `concurrency`). */
  perAccount?: number;
  /** Jobs of one account waiting at once; one more is refused with 429 `rate_limited` (default: no cap). */
  maxQueuedPerAccount?: number;
}

export interface FairQueueAddOptions {
  /** Aborting it drops a waiting job, or aborts the running job's signal; the call rejects with its reason. */
  signal?: AbortSignal;
}

interface Job {
  work: (signal: AbortSignal) => Promise<unknown>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

interface Line {
  waiting: Job[];
  running: number;
  /** When this account was last given a slot (a counter); 0 for an account not served since it queued. */
  servedAt: number;
}

function positiveInt(name: string, v: number): number {
  if (!(Number.isInteger(v) && v > 0) && v !== Number.POSITIVE_INFINITY) {
    throw new TypeError(`FairQueue: ${name} must be a positive integer, got ${v}`);
  }
  return v;
}

export class FairQueue {
  readonly concurrency: number;
  readonly perAccount: number;
  readonly maxQueuedPerAccount: number;
  readonly #lines = new Map<string, Line>();
  #serves = 0;
  #waiting = 0;
  #running = 0;
  #idle: (() => void)[] = [];

  constructor(opts: FairQueueOptions) {
    this.concurrency = positiveInt('concurrency', opts.concurrency);
    this.perAccount = Math.min(positiveInt('perAccount', opts.perAccount ?? opts.concurrency), this.concurrency);
    this.maxQueuedPerAccount = opts.maxQueuedPerAccount ?? Number.POSITIVE_INFINITY;
    if (!(this.maxQueuedPerAccount >= 0)) throw new TypeError('FairQueue: maxQueuedPerAccount must be >= 0');
  }

  /** Jobs waiting for a slot. */
  get size(): number {
    return this.#waiting;
  }

  /** Jobs running. */
  get pending(): number {
    return this.#running;
  }

  /** Jobs of one account waiting and running. */
  sizeOf(accountId: string): { waiting: number; running: number } {
    const line = this.#lines.get(accountId);
    return { waiting: line?.waiting.length ?? 0, running: line?.running ?? 0 };
  }

  add<T>(accountId: string, work: (signal: AbortSignal) => Promise<T>, opts: FairQueueAddOptions = {}): Promise<T> {
    const { signal } = opts;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const line = this.#line(accountId);
    return new Promise<T>((resolve, reject) => {
      const job: Job = { work, resolve: resolve as (v: unknown) => void, reject, signal };
      if (signal) {
        job.onAbort = () => {
          const i = line.waiting.indexOf(job);
          if (i < 0) return; // running: its own signal carries the abort (see #start)
          line.waiting.splice(i, 1);
          this.#waiting--;
          this.#dropIfEmpty(accountId, line);
          reject(signal.reason);
          this.#checkIdle();
        };
        signal.addEventListener('abort', job.onAbort, { once: true });
      }
      line.waiting.push(job);
      this.#waiting++;
      this.#dispatch();
      if (line.waiting.length > this.maxQueuedPerAccount) {
        // Still waiting after dispatch and over the cap: this job is the one refused.
        line.waiting.pop();
        this.#waiting--;
        if (job.onAbort) signal?.removeEventListener('abort', job.onAbort);
        reject(
          apiError(
            'rate_limited',
            `This account already has ${line.waiting.length} calls waiting for this engine `
              + `(the cap is ${this.maxQueuedPerAccount}); retry when some have finished.`,
            { headers: { 'retry-after': '1' } }
          )
        );
      }
    });
  }

  /** Resolves when nothing waits and nothing runs. */
  onIdle(): Promise<void> {
    if (this.#waiting === 0 && this.#running === 0) return Promise.resolve();
    return new Promise((r) => this.#idle.push(r));
  }

  /** Refuses every waiting job (rejected with an AbortError); running jobs go on. */
  clear(): void {
    const reason = new DOMException('The queue was cleared before the job started', 'AbortError');
    for (const [accountId, line] of this.#lines) {
      for (const job of line.waiting.splice(0)) {
        if (job.onAbort) job.signal?.removeEventListener('abort', job.onAbort);
        job.reject(reason);
      }
      this.#dropIfEmpty(accountId, line);
    }
    this.#waiting = 0;
    this.#checkIdle();
  }

  #line(accountId: string): Line {
    let line = this.#lines.get(accountId);
    if (!line) this.#lines.set(accountId, (line = { waiting: [], running: 0, servedAt: 0 }));
    return line;
  }

  #dropIfEmpty(accountId: string, line: Line): void {
    if (line.waiting.length === 0 && line.running === 0) this.#lines.delete(accountId);
  }

  #dispatch(): void {
    while (this.#running < this.concurrency) {
      // Round robin: the free slot goes to the account served longest ago (ties: the first to queue).
      let picked: [string, Line] | undefined;
      for (const entry of this.#lines) {
        const line = entry[1];
        if (line.waiting.length === 0 || line.running >= this.perAccount) continue;
        if (!picked || line.servedAt < picked[1].servedAt) picked = entry;
      }
      if (!picked) return;
      const [accountId, line] = picked;
      line.servedAt = ++this.#serves;
      this.#start(accountId, line, line.waiting.shift()!);
    }
  }

  #start(accountId: string, line: Line, job: Job): void {
    this.#waiting--;
    this.#running++;
    line.running++;
    const controller = new AbortController();
    let settled = false;
    if (job.signal && job.onAbort) {
      job.signal.removeEventListener('abort', job.onAbort);
      job.onAbort = () => {
        controller.abort(job.signal!.reason);
        // The caller stops waiting now; the slot stays taken until the work has really stopped.
        if (!settled) (settled = true), job.reject(job.signal!.reason);
      };
      job.signal.addEventListener('abort', job.onAbort, { once: true });
    }
    const finish = () => {
      if (job.onAbort) job.signal?.removeEventListener('abort', job.onAbort);
      this.#running--;
      line.running--;
      this.#dropIfEmpty(accountId, line);
      this.#dispatch();
      this.#checkIdle();
    };
    let result: Promise<unknown>;
    try {
      result = Promise.resolve(job.work(controller.signal));
    } catch (e) {
      result = Promise.reject(e);
    }
    result.then(
      (v) => {
        if (!settled) (settled = true), job.resolve(v);
        finish();
      },
      (e) => {
        if (!settled) (settled = true), job.reject(e);
        finish();
      }
    );
  }

  #checkIdle(): void {
    if (this.#waiting !== 0 || this.#running !== 0) return;
    for (const r of this.#idle.splice(0)) r();
  }
}
