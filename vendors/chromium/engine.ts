import PQueue from 'p-queue';
import { VendorFailure } from '../../core/define.js';
import type { PdfOutput, PdfRenderInput } from '../../core/capabilities/pdf.js';
import { BrowserPool, type PoolOptions } from './pool.js';
import { RenderJob } from './render.js';
import { Tab } from './tab.js';
import type { Browser } from 'playwright-core';

export interface EngineOptions extends PoolOptions {
  concurrency: number;
  timeoutMs: number;
}

/**
 * Jobs in a bounded queue over the warm browser pool. The timeout covers the job from the
 * moment it starts (a launch after a crash included), not its wait in the queue: the caller's
 * own deadline, through `signal`, bounds the wait.
 */
export class ChromiumEngine {
  readonly pool: BrowserPool;
  private readonly queue: PQueue;
  /** Scriptless tabs between jobs, at most one a queue slot. */
  private readonly idle: Tab[] = [];

  constructor(private readonly opts: EngineOptions) {
    this.pool = new BrowserPool({ ...opts, launchTimeoutMs: opts.timeoutMs });
    this.queue = new PQueue({ concurrency: opts.concurrency });
  }

  /** Jobs rendering now (tests check the bound with it). */
  get running(): number {
    return this.queue.pending;
  }

  render(input: PdfRenderInput, signal: AbortSignal): Promise<PdfOutput> {
    return this.queue.add(() => this.within(input, signal), { signal }) as Promise<PdfOutput>;
  }

  private async within(input: PdfRenderInput, signal: AbortSignal): Promise<PdfOutput> {
    const lease = await this.pool.acquire();
    let tab: Tab | undefined;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const stopped = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new VendorFailure('timeout', `Rendering the PDF took over ${this.opts.timeoutMs / 1000} s.`)),
        this.opts.timeoutMs
      );
      onAbort = () => reject(signal.reason ?? new DOMException('The render was aborted.', 'AbortError'));
      signal.addEventListener('abort', onAbort, { once: true });
    });
    stopped.catch(() => undefined);
    let cut = false;
    const work = (async () => {
      tab = await this.tab(lease.browser, input.javascript);
      // Cut short while the tab opened (a slow launch): the finally below may have passed it by.
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
      throw lease.browser.isConnected() || e instanceof VendorFailure ? e : crashed(e);
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort!);
      // A tab whose job failed or was cut short is closed (that also stops its page); only one
      // that finished cleanly is kept. Both happen before the queue slot frees, so the
      // concurrency bound holds for the browser's memory too.
      if (!done || !tab) {
        cut = true;
        await tab?.close();
        await work.catch(() => undefined);
        await tab?.close(); // opened while the job was being cut short
      } else await this.giveBack(tab);
      lease.release();
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
    await this.pool.close();
  }
}

/** The browser went away mid-job: another try (here, on a fresh browser, or elsewhere) may work. */
function crashed(e: unknown): VendorFailure {
  const why = String((e as Error)?.message ?? e).split('\n')[0];
  return new VendorFailure('unavailable', `Chromium closed during the render: ${why}`, { cause: e });
}
