import PQueue from 'p-queue';
import { type Logger, VendorFailure } from '../../core/kit/vendor.js';
import type { Worker } from 'tesseract.js';
import { tesseractWorkerUrl } from './tesseract-worker-url.js';

/** One Tesseract worker thread and the languages it has loaded. */
interface Slot {
  worker?: Promise<Worker>;
  languages?: string;
  busy: boolean;
  /** Ends the worker once the slot has recognised nothing for the pool's idle time. */
  idleTimer?: NodeJS.Timeout;
}

/**
 * A worker that has recognised nothing for this long is ended: its model and Tesseract's wasm
 * heap (~100 MB) stayed in the gateway for good after one OCR call (bench/stall's rss-after).
 * The next page loads the model again (about a second).
 */
export const WORKER_IDLE_MS = 30_000;

/**
 * tesseract.js workers, one a slot of `concurrency`, each a worker_thread running Tesseract's
 * wasm build off the event loop. A worker is made on the first page that needs it (loading the
 * model is most of the first page's time) and kept for the process; a slot whose worker has
 * the languages asked for is preferred, else one is re-initialised with them. The queue bounds
 * the pages rasterised and recognised at once, so it bounds memory too (a 300-dpi A4 page is a
 * 35 MB bitmap). Each worker thread runs at the background nice (tesseract-worker-url.ts). A worker idle for `idleMs` is ended. A caller gone mid-page terminates that
 * worker: Tesseract cannot be interrupted otherwise, and the next page makes a fresh one.
 */
export class Recognizer {
  private readonly queue: PQueue;
  private readonly slots: Slot[];
  private closed = false;

  constructor(
    concurrency: number,
    private readonly log: Logger,
    private readonly idleMs = WORKER_IDLE_MS
  ) {
    this.queue = new PQueue({ concurrency });
    this.slots = Array.from({ length: concurrency }, () => ({ busy: false }));
  }

  /**
   * The text of the image `draw` makes, with `languages` (`eng`, `eng+deu`) read from
   * `langPath`. `draw` runs in the slot, so a page waiting for its turn holds no bitmap.
   */
  recognize(draw: () => Promise<Buffer>, languages: string, langPath: string, signal: AbortSignal): Promise<string> {
    return this.queue.add(
      async () => {
        const slot = this.pick(languages);
        slot.busy = true;
        clearTimeout(slot.idleTimer);
        try {
          signal.throwIfAborted();
          const image = await draw();
          return await this.untilAborted(slot, signal, async () => {
            try {
              const worker = await this.workerFor(slot, languages, langPath, signal);
              const { data } = await worker.recognize(image);
              return data.text;
            } catch (e) {
              throw signal.aborted ? e : engineFailure(e);
            }
          });
        } finally {
          slot.busy = false;
          this.idle(slot);
        }
      },
      { signal }
    ) as Promise<string>;
  }

  /** Tesseract workers alive (made, not yet ended). */
  get workers(): number {
    return this.slots.filter((s) => s.worker).length;
  }

  private pick(languages: string): Slot {
    const free = this.slots.filter((s) => !s.busy);
    return free.find((s) => s.languages === languages) ?? free.find((s) => !s.worker) ?? free[0]!;
  }

  /**
   * The slot's worker with `languages` loaded. Checked for an abort after each wait: an aborted
   * page's worker is being terminated, and a job sent to it fails inside tesseract.js, where
   * nothing catches it.
   */
  private async workerFor(slot: Slot, languages: string, langPath: string, signal: AbortSignal): Promise<Worker> {
    if (this.closed) throw new Error('The OCR engine is closed.');
    if (slot.worker && slot.languages === languages) return checked(await slot.worker, signal);
    if (slot.worker) {
      const worker = checked(await slot.worker, signal);
      slot.languages = undefined;
      await worker.reinitialize(languages);
      slot.languages = languages;
      return checked(worker, signal);
    }
    slot.languages = languages;
    const spawned = this.spawn(languages, langPath);
    slot.worker = spawned;
    // A worker that failed to start is not kept: the next page tries again.
    spawned.catch(() => slot.worker === spawned && this.drop(slot));
    return checked(await spawned, signal);
  }

  private async spawn(languages: string, langPath: string): Promise<Worker> {
    const { createWorker, OEM } = await import('tesseract.js');
    return createWorker(languages, OEM.LSTM_ONLY, {
      langPath,
      // The data is on disk already: no copy written next to the process's working directory.
      cacheMethod: 'none',
      gzip: true,
      // A URL object, which tesseract.js passes to `new Worker` as it is (its types say string).
      workerPath: tesseractWorkerUrl() as unknown as string,
      errorHandler: (err: unknown) => this.log.warn({ err }, 'tesseract worker error'),
    });
  }

  /** Runs `work`; an abort rejects at once and ends the slot's worker, which may be mid-page. */
  private async untilAborted<T>(slot: Slot, signal: AbortSignal, work: () => Promise<T>): Promise<T> {
    signal.throwIfAborted();
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => {
        this.drop(slot);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([work(), aborted]);
    } finally {
      signal.removeEventListener('abort', onAbort!);
    }
  }

  /** The slot's worker ended after `idleMs` unless a page takes the slot first. */
  private idle(slot: Slot): void {
    if (!slot.worker) return;
    slot.idleTimer = setTimeout(() => slot.busy || this.drop(slot), this.idleMs);
    slot.idleTimer.unref();
  }

  private drop(slot: Slot): void {
    const worker = slot.worker;
    slot.worker = undefined;
    slot.languages = undefined;
    worker?.then((w) => w.terminate()).catch(() => {});
  }

  /** Waiting pages are dropped, running ones finish, then every worker thread ends. */
  async close(): Promise<void> {
    this.closed = true;
    this.queue.clear();
    await this.queue.onIdle();
    await Promise.all(
      this.slots.map(async (slot) => {
        clearTimeout(slot.idleTimer);
        const worker = slot.worker;
        slot.worker = undefined;
        await worker?.then((w) => w.terminate()).catch(() => {});
      })
    );
  }
}

function checked(worker: Worker, signal: AbortSignal): Worker {
  signal.throwIfAborted();
  return worker;
}

/**
 * tesseract.js rejects with bare strings (a worker's message): one that cannot start or read is
 * this engine unavailable, not the caller's document.
 */
function engineFailure(e: unknown): unknown {
  if (e instanceof Error) return e;
  return new VendorFailure('unavailable', `Tesseract failed: ${String(e)}`);
}
