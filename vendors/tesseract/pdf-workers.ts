import { Worker } from 'node:worker_threads';
import { type Logger, PDF_MAX_INPUT_BYTES, VendorFailure } from '../../core/kit/vendor.js';
import { openFailure, pdfjsFiles } from './pdf-document.js';
import { PDF_WORKER_SOURCE } from './pdf-worker-source.js';
import { refused } from './refused.js';

/** A worker thread running pdfjs, and what it holds. */
interface Thread {
  readonly worker: Worker;
  readonly slot: number;
  /** Requests sent and not answered, by id. */
  readonly pending: Map<number, Pending>;
  /** Documents open (or opening) on it. */
  readonly docs: Set<number>;
  /** Ends the thread once it has held no document for the pool's idle time. */
  idleTimer?: NodeJS.Timeout;
}

interface Pending {
  doc: number;
  resolve(value: unknown): void;
  reject(e: unknown): void;
}

interface WorkerError {
  type: string;
  name: string;
  message: string;
  stack?: string;
}

const never = new AbortController().signal;

/**
 * A thread that has held no document for this long is ended: pdfjs and what it cached stay in
 * its heap (~60 MB) while it lives, and the gateway's memory would stay there after one OCR
 * call (bench/stall's rss-after). The next document pays the thread's start again (~0.2 s).
 */
export const PDF_THREAD_IDLE_MS = 30_000;

/**
 * pdfjs off the event loop: in Node it runs in the calling thread, where it would hold every
 * other request for 20-70 ms a text page and 200-500 ms a scanned one (decoding the image).
 * One worker thread per `concurrency` slot, made when a document needs one and kept (loading
 * pdfjs takes a thread ~0.2 s), so at most `concurrency` cores parse and draw PDFs. A document
 * lives in one thread from open to close; a new one goes to an idle thread, else a new thread,
 * else the one holding the fewest; a thread without documents for `idleMs` is ended. Pages are
 * drawn when the recognizer's queue reaches them, so that queue bounds the bitmaps too. Threads
 * are referenced only while a request is under way: an idle pool never keeps the process alive.
 */
export class PdfWorkers {
  private readonly threads: (Thread | undefined)[];
  private nextId = 1;
  private closed = false;

  constructor(
    concurrency: number,
    private readonly log: Logger,
    private readonly idleMs = PDF_THREAD_IDLE_MS
  ) {
    this.threads = Array.from({ length: concurrency }, () => undefined);
  }

  /** The document opened in a worker; the caller's error when it is too big, encrypted or not a PDF. */
  async open(data: Buffer, signal: AbortSignal): Promise<PdfFile> {
    if (this.closed) throw new Error('The OCR engine is closed.');
    if (data.length > PDF_MAX_INPUT_BYTES) {
      throw refused(`The PDF is ${data.length} bytes, over the cap of ${PDF_MAX_INPUT_BYTES} bytes.`, 413);
    }
    signal.throwIfAborted();
    // One copy, then moved to the worker: the caller's Buffer may be a slice of a pool, and the
    // router hands the same input to the next engine when this one fails.
    const bytes = new Uint8Array(data);
    const thread = this.pick();
    const doc = this.nextId++;
    thread.docs.add(doc);
    try {
      const pages = await this.send<number>(thread, doc, { op: 'open', data: bytes.buffer }, signal, [bytes.buffer]);
      return this.file(thread, doc, pages);
    } catch (e) {
      void this.release(thread, doc);
      throw signal.aborted || e instanceof VendorFailure ? e : openFailure(e);
    }
  }

  /** Threads running now. */
  get alive(): number {
    return this.threads.filter(Boolean).length;
  }

  /** Every thread ended; requests under way fail, documents open are gone. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(
      this.threads.map((thread) => thread && this.stop(thread, new Error('The OCR engine is closed.')))
    );
  }

  /** The handle the caller reads `doc` through. */
  private file(thread: Thread, doc: number, pages: number): PdfFile {
    return {
      pages,
      text: (n, signal) => this.request<string>(thread, doc, { op: 'text', page: n }, signal),
      render: async (n, dpi, signal) => {
        const png = await this.request<Uint8Array>(thread, doc, { op: 'render', page: n, dpi }, signal);
        return Buffer.from(png.buffer, png.byteOffset, png.byteLength);
      },
      close: () => this.release(thread, doc),
    };
  }

  /** One request for `doc`, which must still be open on its living thread. */
  private request<T>(thread: Thread, doc: number, message: object, signal: AbortSignal): Promise<T> {
    if (this.threads[thread.slot] !== thread || !thread.docs.has(doc)) {
      return Promise.reject(new VendorFailure('unavailable', 'The PDF worker holding this document has stopped.'));
    }
    return this.send(thread, doc, message, signal);
  }

  private send<T>(
    thread: Thread,
    doc: number,
    message: object,
    signal: AbortSignal,
    transfer: ArrayBuffer[] = []
  ): Promise<T> {
    if (signal.aborted) return Promise.reject(signal.reason);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => {
        if (!thread.pending.delete(id)) return;
        reject(signal.reason);
        this.abandon(thread, doc, signal.reason);
      };
      const settled = () => signal.removeEventListener('abort', onAbort);
      thread.pending.set(id, {
        doc,
        resolve: (value) => (settled(), resolve(value as T)),
        reject: (e) => (settled(), reject(e)),
      });
      if (thread.pending.size === 1) thread.worker.ref();
      signal.addEventListener('abort', onAbort, { once: true });
      thread.worker.postMessage({ ...message, id, doc }, transfer);
    });
  }

  /** The document closed in its worker, which then takes others; answered or not, it is gone. */
  private release(thread: Thread, doc: number): Promise<void> {
    if (!thread.docs.delete(doc) || this.threads[thread.slot] !== thread) return Promise.resolve();
    const idle = () => {
      if (thread.docs.size || this.threads[thread.slot] !== thread) return;
      clearTimeout(thread.idleTimer);
      thread.idleTimer = setTimeout(() => {
        if (!thread.docs.size) void this.stop(thread, new Error('The PDF worker was idle.'));
      }, this.idleMs);
      thread.idleTimer.unref();
    };
    return this.send(thread, doc, { op: 'close' }, never).then(idle, idle);
  }

  /**
   * A caller gone mid-request. pdfjs cannot be interrupted inside a page (one image's decoding
   * is one synchronous call), so a thread working for this document alone is ended and the next
   * document makes a fresh one; a thread shared with other callers' documents only closes this
   * one (pdfjs stops its work at the next step), so one caller's abort never fails another's.
   */
  private abandon(thread: Thread, doc: number, reason: unknown): void {
    if (!thread.docs.has(doc)) return;
    if (thread.docs.size === 1) {
      void this.stop(thread, reason);
      return;
    }
    for (const [id, p] of thread.pending) {
      if (p.doc !== doc) continue;
      thread.pending.delete(id);
      p.reject(reason);
    }
    if (thread.pending.size === 0) thread.worker.unref();
    void this.release(thread, doc);
  }

  /** An idle thread, else a new one while there are free slots, else the least busy. */
  private pick(): Thread {
    let least: Thread | undefined;
    let free = -1;
    for (const [slot, thread] of this.threads.entries()) {
      if (!thread) free = free < 0 ? slot : free;
      else if (!least || thread.docs.size < least.docs.size) least = thread;
    }
    if (least && least.docs.size === 0) return busy(least);
    if (free >= 0) return this.spawn(free);
    return busy(least!);
  }

  private spawn(slot: number): Thread {
    const worker = new Worker(PDF_WORKER_SOURCE, { eval: true, workerData: pdfjsFiles() });
    const thread: Thread = { worker, slot, pending: new Map(), docs: new Set() };
    worker.on('message', (m: { id: number; value?: unknown; error?: WorkerError }) => {
      const p = thread.pending.get(m.id);
      if (!p) return;
      thread.pending.delete(m.id);
      if (thread.pending.size === 0) worker.unref();
      if (m.error) p.reject(rebuilt(m.error));
      else p.resolve(m.value);
    });
    const lost = (e: Error) => {
      if (this.threads[slot] !== thread) return; // ended here, on purpose
      this.log.warn({ err: e }, 'PDF worker thread stopped');
      void this.stop(thread, new VendorFailure('unavailable', `The PDF worker stopped: ${e.message}`));
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`exit code ${code}`)));
    worker.unref(); // after the listeners: adding a 'message' listener refs the worker again
    this.threads[slot] = thread;
    return thread;
  }

  /** The thread out of its slot, what it was doing failed with `reason`, then ended. */
  private async stop(thread: Thread, reason: unknown): Promise<void> {
    clearTimeout(thread.idleTimer);
    if (this.threads[thread.slot] === thread) this.threads[thread.slot] = undefined;
    const pending = [...thread.pending.values()];
    thread.pending.clear();
    thread.docs.clear();
    for (const p of pending) p.reject(reason);
    await thread.worker.terminate().catch(() => {});
  }
}

/** The thread, about to take a document: not ended for being idle. */
function busy(thread: Thread): Thread {
  clearTimeout(thread.idleTimer);
  return thread;
}

/** A document open in a PDF worker: its pages read and drawn there. */
export interface PdfFile {
  /** How many pages it has. */
  readonly pages: number;
  /** Page `n`'s text layer (1-based), as the PDF has it: not yet tidied. */
  text(n: number, signal: AbortSignal): Promise<string>;
  /** Page `n` drawn at `dpi` (less for a huge page) as PNG, white behind. */
  render(n: number, dpi: number, signal: AbortSignal): Promise<Buffer>;
  close(): Promise<void>;
}

const BUILTIN: Record<string, ErrorConstructor> = { TypeError, RangeError, ReferenceError };

/** The worker's error as the engine classifies it: by class for a bug, by name for pdfjs's own. */
function rebuilt(d: WorkerError): Error {
  if (d.type === 'unavailable') return new VendorFailure('unavailable', `pdfjs-dist cannot be loaded: ${d.message}`);
  const Class = BUILTIN[d.type] ?? Error;
  const e = new Class(d.message);
  e.name = d.name;
  if (d.stack) e.stack = d.stack;
  return e;
}
