import PQueue from 'p-queue';
import { VendorFailure } from '../../core/define.js';
import type { PdfOutput, PdfRenderInput } from '../../core/capabilities/pdf.js';
import { BrowserPool, type PoolOptions } from './pool.js';
import { RenderJob } from './render.js';

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

  constructor(private readonly opts: EngineOptions) {
    this.pool = new BrowserPool(opts);
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
    const job = new RenderJob(input);
    const lease = await this.pool.acquire();
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
    const work = job.run(lease.browser);
    try {
      return await Promise.race([work, stopped]);
    } catch (e) {
      throw lease.browser.isConnected() || e instanceof VendorFailure ? e : crashed(e);
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort!);
      // The context closes before the queue slot frees, so the concurrency bound holds for memory too.
      await job.stop();
      await work.catch(() => undefined);
      lease.release();
    }
  }

  async close(): Promise<void> {
    this.queue.clear();
    await this.queue.onIdle();
    await this.pool.close();
  }
}

/** The browser went away mid-job: another try (here, on a fresh browser, or elsewhere) may work. */
function crashed(e: unknown): VendorFailure {
  const why = String((e as Error)?.message ?? e).split('\n')[0];
  return new VendorFailure('unavailable', `Chromium closed during the render: ${why}`, { cause: e });
}
