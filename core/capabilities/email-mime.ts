import { isApiError } from '../errors.js';
import { TaskStopped } from '../isolation/task-errors.js';
import { WorkerPool } from '../isolation/worker-pool.js';
import { VendorFailure } from '../router/failure.js';
import type { mailOptions } from './email.js';
import type { BuiltMessage, tasks } from './email-mime-tasks.js';

export type { BuiltMessage } from './email-mime-tasks.js';

export interface MimeBuilderOptions {
  /** The vendor instance, for messages ("the smtp MIME task ran past…"). */
  name: string;
  /** Messages built at once, each in its own worker thread. */
  threads: number;
  /** Messages of one account built at once (at most `threads`). */
  perAccount: number;
  /** Messages of one account waiting for a thread; one more is refused as rate_limited (retried later). */
  maxQueuedPerAccount: number;
  /** A thread's heap (MiB): a message that needs more fails as too large. */
  maxMemoryMb: number;
}

/**
 * An email vendor's message builder: the message composed and DKIM-signed in worker threads
 * (email-mime-tasks.ts), queued fairly per account, so no message holds the event loop and the
 * call's deadline ends one that takes too long. The module is found from here, not from the
 * vendor, so every email vendor shares it. Nothing is sent when a build fails, so its failures
 * are the router's kinds that say so.
 */
export class EmailMimeBuilder {
  readonly #pool: WorkerPool<typeof tasks>;

  constructor(private readonly opts: MimeBuilderOptions) {
    this.#pool = new WorkerPool<typeof tasks>({
      name: `${opts.name} MIME`,
      caller: import.meta.url,
      module: 'core/capabilities/email-mime-tasks',
      concurrency: opts.threads,
      perAccount: Math.min(opts.perAccount, opts.threads),
      maxQueuedPerAccount: opts.maxQueuedPerAccount,
      maxMemoryMb: opts.maxMemoryMb,
    });
  }

  /** The message of `mail` (as `mailOptions` makes it, a vendor's own DKIM key added if it has one). */
  async build(
    mail: ReturnType<typeof mailOptions>,
    opts: { signal: AbortSignal; accountId?: string }
  ): Promise<BuiltMessage> {
    try {
      return await this.#pool.run(opts.accountId ?? '', 'build', mail, { signal: opts.signal });
    } catch (e) {
      throw this.#failure(e, opts.signal);
    }
  }

  #failure(e: unknown, signal: AbortSignal): unknown {
    const name = this.opts.name;
    if (e instanceof TaskStopped && e.reason === 'memory')
      return new VendorFailure(
        'client_error',
        `The message needs more than ${name}'s ${this.opts.maxMemoryMb} MiB to build.`,
        { status: 413 }
      );
    // Its account's queue is full: nothing left, so the outbox sends it again later.
    if (isApiError(e) && e.code === 'rate_limited') return new VendorFailure('rate_limited', e.message, { cause: e });
    if (e instanceof TaskStopped || signal.aborted)
      return new VendorFailure('not_sent', `${name} did not build the message, nothing was sent: ${errorText(e)}`);
    // The composer refused the message itself: another vendor, or a retry, would fare no better.
    return new VendorFailure('client_error', `${name} could not build the message: ${errorText(e)}`, { cause: e });
  }

  close(): Promise<void> {
    return this.#pool.close();
  }
}

const errorText = (e: unknown) => (e as Error)?.message ?? String(e);
