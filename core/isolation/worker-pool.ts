import { Worker } from 'node:worker_threads';
import { FairQueue } from './fair-queue.js';
import { findTaskModule, tsxLoaderFor } from './task-module.js';
import { rebuiltError, type SerialisedError, TaskStopped } from './task-errors.js';
import { WORKER_SOURCE } from './worker-source.js';

// CPU-heavy work (a PDF edit, a template rendering) off the event loop, in worker threads that can
// always be ended. On the event loop such work held every request of every account for as long as
// it ran, and nothing could stop it: a timeout only stopped waiting for it. Here each task runs
// alone in a thread; a task past its deadline, or whose caller gave up, has its thread terminated
// (V8 stops even a loop that never yields) and the next task gets a fresh thread. Tasks wait in a
// FairQueue (per account, round robin), so the threads are shared fairly between accounts, and
// each thread's heap is bounded (`resourceLimits`), so one task cannot take the process's memory.

/** A task module: `export const tasks = { name: async (input) => output }` (see task-module.ts). */
export type TaskModule = Record<string, (input: any) => Promise<unknown>>;

export interface WorkerPoolOptions {
  /** For messages: "the pdf-lib task ran past…". */
  name: string;
  /** The caller's `import.meta.url` and the task module's path from the tree's root, without extension. */
  caller: string;
  module: string;
  /** Threads (tasks running) at once. */
  concurrency: number;
  /** Tasks of one account running at once (default: all of `concurrency`). */
  perAccount?: number;
  /** Tasks of one account waiting; one more is refused with 429 (default: no cap). */
  maxQueuedPerAccount?: number;
  /** The old-generation heap of a thread, in MiB: past it the thread is ended and the task fails. */
  maxMemoryMb: number;
  /** An idle thread is ended after this long (its heap goes with it); default 30 s. */
  idleMs?: number;
}

export interface RunOptions {
  /** Aborting it ends the task's thread at once (or drops the task while it waits). */
  signal?: AbortSignal;
  /**
   * Longest the task may run once begun in its thread (ms; a thread's start and module load are not
   * counted); then its thread is ended with a TaskStopped('timeout').
   */
  timeoutMs?: number;
}

interface Thread {
  worker: Worker;
  job?: { id: number; resolve(v: unknown): void; reject(e: unknown): void };
  /** The job's task has begun in the thread (its module loaded): its deadline starts. */
  onStart?: () => void;
  idleTimer?: NodeJS.Timeout;
}

let nextId = 1;

/** Tasks running in threads now, by pool name, across the process (what a test or a probe reads). */
const runningByName = new Map<string, number>();

/** Tasks of pools named `name` begun in their threads (module loaded) and not yet over. */
export function runningTasks(name: string): number {
  return runningByName.get(name) ?? 0;
}

/** Tasks of pools named `name` ever begun in their threads (a test's proof that work left the loop). */
const begunByName = new Map<string, number>();
export function begunTasks(name: string): number {
  return begunByName.get(name) ?? 0;
}

export class WorkerPool<M extends TaskModule> {
  readonly #opts: WorkerPoolOptions;
  readonly #queue: FairQueue;
  readonly #idle: Thread[] = [];
  readonly #live = new Set<Thread>();
  #module?: { url: string; tsx?: string };
  #closed = false;

  constructor(opts: WorkerPoolOptions) {
    this.#opts = opts;
    this.#queue = new FairQueue({
      concurrency: opts.concurrency,
      perAccount: opts.perAccount,
      maxQueuedPerAccount: opts.maxQueuedPerAccount,
    });
  }

  /** Threads alive (running or idle). */
  get threads(): number {
    return this.#live.size;
  }

  /** Tasks waiting for a thread, and running. */
  get size(): number {
    return this.#queue.size;
  }
  get pending(): number {
    return this.#queue.pending;
  }

  /** Runs `task` of the module for `accountId` in a thread, when the account's turn comes. */
  run<K extends keyof M & string>(
    accountId: string,
    task: K,
    input: Parameters<M[K]>[0],
    opts: RunOptions = {}
  ): Promise<Awaited<ReturnType<M[K]>>> {
    if (this.#closed) return Promise.reject(new TaskStopped('closed', `The ${this.#opts.name} workers are closed.`));
    return this.#queue.add(
      accountId,
      (signal) => this.#exec(task, input, signal, opts.timeoutMs) as Promise<Awaited<ReturnType<M[K]>>>,
      { signal: opts.signal }
    );
  }

  /** Waiting tasks refused, running ones' threads ended. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#queue.clear();
    const stopped = new TaskStopped('closed', `The ${this.#opts.name} workers are closed.`);
    await Promise.all([...this.#live].map((t) => this.#stop(t).then(() => t.job?.reject(stopped))));
  }

  #exec(task: string, input: unknown, signal: AbortSignal, timeoutMs?: number): Promise<unknown> {
    if (signal.aborted) return Promise.reject(signal.reason);
    const thread = this.#take();
    const id = nextId++;
    const name = this.#opts.name;
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      let begun = false;
      const done = () => {
        if (!thread.job) return;
        if (begun) runningByName.set(name, runningTasks(name) - 1);
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        thread.job = undefined;
        thread.onStart = undefined;
      };
      // The promise settles once the thread is gone, so the queue's slot frees when the CPU does.
      const end = (reason: unknown) => {
        done();
        void this.#stop(thread).then(() => reject(reason));
      };
      const onAbort = () => end(signal.reason);
      thread.job = {
        id,
        resolve: (v) => (done(), this.#release(thread), resolve(v)),
        reject: (e) => (done(), this.#live.has(thread) && this.#release(thread), reject(e)),
      };
      signal.addEventListener('abort', onAbort, { once: true });
      thread.onStart = () => {
        begun = true;
        runningByName.set(name, runningTasks(name) + 1);
        begunByName.set(name, begunTasks(name) + 1);
        if (timeoutMs === undefined) return;
        const stopped = new TaskStopped('timeout', `The ${name} task ran past its ${timeoutMs} ms and was stopped.`);
        timer = setTimeout(() => end(stopped), timeoutMs);
      };
      thread.worker.ref();
      thread.worker.postMessage({ id, task, input });
    });
  }

  #take(): Thread {
    const idle = this.#idle.pop();
    if (idle) {
      clearTimeout(idle.idleTimer);
      return idle;
    }
    return this.#spawn();
  }

  #release(thread: Thread): void {
    thread.worker.unref();
    if (this.#closed) return void this.#stop(thread);
    this.#idle.push(thread);
    thread.idleTimer = setTimeout(() => void this.#stop(thread), this.#opts.idleMs ?? 30_000);
    thread.idleTimer.unref();
  }

  #spawn(): Thread {
    this.#module ??= (() => {
      const url = findTaskModule(this.#opts.caller, this.#opts.module);
      return { url, tsx: tsxLoaderFor(url) };
    })();
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { module: this.#module.url, tsx: this.#module.tsx },
      resourceLimits: { maxOldGenerationSizeMb: this.#opts.maxMemoryMb },
    });
    const thread: Thread = { worker };
    this.#live.add(thread);
    worker.on('message', (m: { id: number; started?: true; value?: unknown; error?: SerialisedError }) => {
      if (thread.job?.id !== m.id) return;
      if (m.started) return thread.onStart?.();
      if (m.error) thread.job.reject(rebuiltError(m.error));
      else thread.job.resolve(revived(m.value));
    });
    const lost = (e: Error & { code?: string }) => {
      if (!this.#live.has(thread)) return; // ended here, on purpose
      const name = this.#opts.name;
      const failure =
        e.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new TaskStopped(
              'memory',
              `The ${name} task needed more than ${this.#opts.maxMemoryMb} MiB and was stopped.`
            )
          : new TaskStopped('crashed', `The ${name} worker stopped: ${e.message}`);
      void this.#stop(thread).then(() => thread.job?.reject(failure));
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`exit code ${code}`)));
    worker.unref(); // after the listeners: adding a 'message' listener refs the worker again
    return thread;
  }

  async #stop(thread: Thread): Promise<void> {
    if (!this.#live.delete(thread)) return;
    clearTimeout(thread.idleTimer);
    const i = this.#idle.indexOf(thread);
    if (i >= 0) this.#idle.splice(i, 1);
    await thread.worker.terminate();
  }
}

/** Uint8Arrays of the value as Buffers (views, not copies), as the task's types say. */
function revived(v: unknown, depth = 0): unknown {
  if (depth > 8 || v === null || typeof v !== 'object') return v;
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  if (Array.isArray(v)) return v.map((x) => revived(x, depth + 1));
  if (Object.getPrototypeOf(v) !== Object.prototype) return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, revived(x, depth + 1)]));
}
