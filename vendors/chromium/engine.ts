import PQueue from 'p-queue';
import { VendorFailure, WorkerPool, type PdfOutput, type PdfRenderInput } from '../../core/kit/vendor.js';
import { BrowserPool, type Lease, type PoolOptions } from './pool.js';
import { RenderJob } from './render.js';
import { Tab } from './tab.js';
import type { Browser } from 'playwright-core';
import type { tasks } from './tasks.js';

export interface EngineOptions extends PoolOptions {
  concurrency: number;
  timeoutMs: number;
}

/**
 * Jobs in a bounded queue over the warm browser pool. The timeout covers the job from the
 * moment it has its browser: not its wait in the queue, nor a launch (the first, or after a
 * crash), which the pool bounds on its own (`launchTimeoutMs`). The caller's own deadline,
 * through `signal`, bounds both waits; a launch is shared by the jobs that arrive during it,
 * so a caller that goes away does not cut it short and the next job finds the browser warm.
 */
export class ChromiumEngine {
  readonly pool: BrowserPool;
  private readonly queue: PQueue;
  /** Scriptless tabs between jobs, at most one a queue slot. */
  private readonly idle: Tab[] = [];
  /** Page counting (pdf-lib) in a worker thread: tasks.ts. */
  private readonly counter: WorkerPool<typeof tasks>;

  constructor(private readonly opts: EngineOptions) {
    // A cold start on a loaded machine takes seconds whatever a render's budget: never under 30 s.
    this.pool = new BrowserPool({ ...opts, launchTimeoutMs: Math.max(30_000, opts.timeoutMs) });
    this.queue = new PQueue({ concurrency: opts.concurrency });
    this.counter = new WorkerPool<typeof tasks>({
      name: 'chromium page count',
      caller: import.meta.url,
      module: 'vendors/chromium/tasks',
      concurrency: 1,
      // A printed document is at most a few MiB; pdf-lib's objects for it a few times that.
      maxMemoryMb: 256,
    });
  }

  /** Jobs rendering now (tests check the bound with it). */
  get running(): number {
    return this.queue.pending;
  }

  /**
   * The document, then its pages counted in the worker (after the tab and queue slot are free:
   * the count needs no browser), within the job's timeout again.
   */
  async render(input: PdfRenderInput, signal: AbortSignal, accountId = ''): Promise<PdfOutput> {
    const data = (await this.queue.add(() => this.within(input, signal), { signal })) as Buffer;
    const pages = await this.counter.run(accountId, 'pages', data, { signal, timeoutMs: this.opts.timeoutMs });
    return { data, pages };
  }

  private async within(input: PdfRenderInput, signal: AbortSignal): Promise<Buffer> {
    const leased = this.pool.acquire();
    leased.catch(() => undefined);
    let lease: Lease | undefined;
    let tab: Tab | undefined;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    let startClock: () => void = () => undefined;
    const stopped = new Promise<never>((_, reject) => {
      startClock = () => {
        timer = setTimeout(
          () => reject(new VendorFailure('timeout', `Rendering the PDF took over ${this.opts.timeoutMs / 1000} s.`)),
          this.opts.timeoutMs
        );
      };
      onAbort = () => reject(signal.reason ?? new DOMException('The render was aborted.', 'AbortError'));
      signal.addEventListener('abort', onAbort, { once: true });
    });
    stopped.catch(() => undefined);
    let cut = false;
    const work = (async () => {
      const got = await leased.catch((e) => Promise.reject(notStarted(e)));
      lease = got;
      if (cut) throw new Error('cut short');
      startClock();
      tab = await this.tab(got.browser, input.javascript);
      // Cut short while the tab opened: the finally below may have passed it by.
      if (cut) throw new Error('cut short');
      tab.user = new RenderJob(input);
      return (tab.user as RenderJob).run(tab.page);
    })();
    let done = false;
    try {
      const out = await Promise.race([work, stopped]);
      done = true;
      return out;
    } catch (e) {
      throw !lease || lease.browser.isConnected() || e instanceof VendorFailure ? e : crashed(e);
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort!);
      // A tab whose job failed or was cut short is closed (that also stops its page); only one
      // that finished cleanly is kept. Both happen before the queue slot frees, so the
      // concurrency bound holds for the browser's memory too.
      if (!lease) {
        // Given up while the browser launched: the launch goes on, and its lease is let go when it comes.
        cut = true;
        void leased.then(
          (l) => l.release(),
          () => undefined
        );
        work.catch(() => undefined);
      } else if (!done || !tab) {
        cut = true;
        await tab?.close();
        await work.catch(() => undefined);
        await tab?.close(); // opened while the job was being cut short
      } else await this.giveBack(tab);
      lease?.release();
    }
  }

  /** An idle scriptless tab of this browser, or a new one. */
  private async tab(browser: Browser, javascript: boolean): Promise<Tab> {
    if (!javascript) {
      while (this.idle.length) {
        const tab = this.idle.pop()!;
        if (tab.browser === browser && tab.usable) return tab;
        await tab.close();
      }
    }
    return Tab.open(browser, javascript, this.opts.timeoutMs);
  }

  private async giveBack(tab: Tab): Promise<void> {
    if (tab.javascript || !tab.usable) return tab.close();
    try {
      await tab.reset();
      this.idle.push(tab);
    } catch {
      await tab.close();
    }
  }

  async close(): Promise<void> {
    this.queue.clear();
    await this.queue.onIdle();
    await Promise.all(this.idle.splice(0).map((t) => t.close()));
    await Promise.all([this.pool.close(), this.counter.close()]);
  }
}

/** The browser did not start (a broken install, or a launch past the pool's bound): another vendor may work. */
function notStarted(e: unknown): VendorFailure {
  const why = String((e as Error)?.message ?? e).split('\n')[0];
  return new VendorFailure('unavailable', `Chromium did not start: ${why}`, { cause: e });
}

/** The browser went away mid-job: another try (here, on a fresh browser, or elsewhere) may work. */
function crashed(e: unknown): VendorFailure {
  const why = String((e as Error)?.message ?? e).split('\n')[0];
  return new VendorFailure('unavailable', `Chromium closed during the render: ${why}`, { cause: e });
}
