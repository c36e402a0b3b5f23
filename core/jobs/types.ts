// What handlers and producers of jobs see of the engine.
import type { Kysely } from 'kysely';

export interface JobContext<P = any> {
  /** Stable across attempts: handlers use it to make their effect happen once. */
  id: string;
  kind: string;
  payload: P;
  /** 1-based number of this attempt. */
  attempt: number;
  maxAttempts: number;
  runAt: number;
  /** Aborted when the engine stops past its grace period or the lease was lost. */
  signal: AbortSignal;
  /**
   * Marks the job done inside the handler's own last transaction (`trx`), fenced by the lease
   * as the engine's own write: one commit a job less. Call it as that transaction's last
   * statement; when its commit fails the handler throws and the engine retries as usual.
   * Returns false when the lease was lost (another node holds the job).
   */
  completeIn(trx: Kysely<any>): Promise<boolean>;
}

export type JobHandler<P = any> = (job: JobContext<P>) => Promise<void>;

export interface KindOptions {
  /** Jobs of this kind one node runs at once (p-queue). */
  concurrency?: number;
  leaseMs?: number;
  /** Delay before the next attempt after the n-th failed one. */
  backoff?: (attempt: number) => number;
  /**
   * Called when a job dies without its handler seeing the end: its last attempt was claimed by
   * a node that died. Handlers record their own final failures; this covers the rest.
   */
  onExhausted?: (id: string, payload: any, error: string) => Promise<void>;
}

export interface EnqueueSpec {
  kind: string;
  payload: unknown;
  runAt?: number;
  maxAttempts?: number;
  /** Use this id (a delivery id, say) instead of a new one. */
  id?: string;
  /** One job per key however often it is enqueued, from however many nodes. */
  uniqueKey?: string;
}

/** Thrown by a handler to steer what happens next: retry at a given delay, or give up now. */
export class JobRetry extends Error {
  readonly delayMs?: number;
  readonly permanent: boolean;
  constructor(message: string, opts: { delayMs?: number; permanent?: boolean } = {}) {
    super(message);
    this.name = 'JobRetry';
    this.delayMs = opts.delayMs;
    this.permanent = opts.permanent ?? false;
  }
}
