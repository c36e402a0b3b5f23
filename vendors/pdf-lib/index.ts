import { Type } from '@sinclair/typebox';
import PQueue from 'p-queue';
import { defineVendor } from '../../core/define.js';
import { pdfPlanPrice, type PDF_CAPABILITIES } from '../../core/capabilities/pdf.js';
import type { ImplOf } from '../../core/capabilities/capability.js';
import { mergePdfs, splitPdf } from './edit.js';
import { watermarkPdf } from './watermark.js';
import { pdfLib } from './load.js';

type Caps = typeof PDF_CAPABILITIES;

/**
 * The embedded PDF editor: pdf-lib (pure JavaScript) in the gateway's process, so a fresh
 * gateway merges, splits and watermarks PDFs with no vendor key. Priced by the PDF area's
 * plan (flat, or per page of the result): the engine itself costs nothing per call.
 */
export default defineVendor({
  name: 'pdf-lib',
  embedded: true,
  regions: ['global'],
  configSchema: Type.Object(
    {
      concurrency: Type.Integer({
        minimum: 1,
        maximum: 64,
        default: 2,
        description: 'Documents worked on at once; the rest wait their turn.',
      }),
    },
    { additionalProperties: false, default: {} }
  ),
  create(config) {
    // pdf-lib parses and writes on the event loop, holding whole documents (up to 50 MB each)
    // in memory: a bound keeps a burst of merges from taking all of it and every request's turn.
    const queue = new PQueue({ concurrency: config.concurrency });
    const run = <T>(signal: AbortSignal, work: () => Promise<T>) => queue.add(work, { signal }) as Promise<T>;
    const merge: ImplOf<Caps['pdf.merge']> = {
      invoke: (input, { signal }) => run(signal, () => mergePdfs(input)),
      price: (_input, output, plan) => pdfPlanPrice(plan, output?.pages),
    };
    const split: ImplOf<Caps['pdf.split']> = {
      invoke: (input, { signal }) => run(signal, () => splitPdf(input)),
      price: (_input, output, plan) =>
        pdfPlanPrice(
          plan,
          output?.parts.reduce((n, p) => n + p.pages, 0)
        ),
    };
    const watermark: ImplOf<Caps['pdf.watermark']> = {
      invoke: (input, { signal }) => run(signal, () => watermarkPdf(input)),
      price: (_input, output, plan) => pdfPlanPrice(plan, output?.pages),
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
      async close() {
        queue.clear();
        await queue.onIdle();
      },
    };
  },
});
