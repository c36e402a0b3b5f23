import { Type } from '@sinclair/typebox';
import { defineVendor, type PDF_CAPABILITIES, type ImplOf, TaskStopped, WorkerPool } from '../../core/kit/vendor.js';
import type { EditCaps } from './caps.js';
import { pdfLib, refused } from './load.js';
import type { tasks } from './tasks.js';

type Caps = typeof PDF_CAPABILITIES;

const int = (min: number, max: number, def: number, description: string) =>
  Type.Integer({ minimum: min, maximum: max, default: def, description });

/**
 * The embedded PDF editor: pdf-lib (pure JavaScript), so a fresh gateway merges, splits and
 * watermarks PDFs with no vendor key. It runs in worker threads (vendors/pdf-lib/tasks.ts): on
 * the event loop a 10,000-page split held every request of every account for seconds, and
 * nothing could stop it. Priced by the PDF area (flat, or per page of the result).
 */
export default defineVendor({
  name: 'pdf-lib',
  embedded: true,
  regions: ['global'],
  configSchema: Type.Object(
    {
      concurrency: int(1, 64, 2, 'Documents worked on at once, each in its own worker thread; the rest wait.'),
      per_account: int(1, 64, 1, 'Documents of one account worked on at once (at most `concurrency`).'),
      max_queued_per_account: int(0, 10_000, 20, 'Documents of one account waiting; one more is refused (429).'),
      max_memory_mb: int(64, 16_384, 1024, "A worker thread's heap (MiB); a document that needs more fails (413)."),
      max_pages_in: int(1, 1_000_000, 10_000, 'Pages of any one input document; more is refused (413).'),
      max_pages_out: int(1, 1_000_000, 20_000, "Pages of the result (a merge's document, a split's parts together)."),
      max_output_bytes: int(1024, 4 * 1024 ** 3, 256 * 1024 ** 2, "Bytes of the result (a split's parts together)."),
    },
    { additionalProperties: false, default: {} }
  ),
  create(config) {
    const pool = new WorkerPool<typeof tasks>({
      name: 'pdf-lib',
      caller: import.meta.url,
      module: 'vendors/pdf-lib/tasks',
      concurrency: config.concurrency,
      perAccount: config.per_account,
      maxQueuedPerAccount: config.max_queued_per_account,
      maxMemoryMb: config.max_memory_mb,
    });
    const caps: EditCaps = {
      maxPagesIn: config.max_pages_in,
      maxPagesOut: config.max_pages_out,
      maxOutputBytes: config.max_output_bytes,
    };
    // The router's deadline aborts the signal, which ends the document's thread.
    const run = <K extends keyof typeof tasks>(
      task: K,
      input: any,
      opts: { signal: AbortSignal; accountId?: string }
    ) =>
      pool.run(opts.accountId ?? '', task, { input, caps }, { signal: opts.signal }).catch((e) => {
        if (e instanceof TaskStopped && e.reason === 'memory')
          throw refused(`The document needs more than the engine's ${config.max_memory_mb} MiB to edit.`, 413);
        throw e;
      });
    const merge: ImplOf<Caps['pdf.merge']> = {
      invoke: (input, opts) => run('merge', input, opts),
    };
    const split: ImplOf<Caps['pdf.split']> = {
      invoke: (input, opts) => run('split', input, opts),
    };
    const watermark: ImplOf<Caps['pdf.watermark']> = {
      invoke: (input, opts) => run('watermark', input, opts),
    };
    return {
      capabilities: { 'pdf.merge': merge, 'pdf.split': split, 'pdf.watermark': watermark },
      async health() {
        try {
          await pdfLib();
          return { ok: true };
        } catch (e) {
          return { ok: false, error: (e as Error).message };
        }
      },
      close: () => pool.close(),
    };
  },
});
