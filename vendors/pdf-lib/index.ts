import { Type } from '@sinclair/typebox';
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
  configSchema: Type.Object({}, { additionalProperties: false, default: {} }),
  create() {
    const merge: ImplOf<Caps['pdf.merge']> = {
      invoke: (input) => mergePdfs(input),
      price: (_input, output, plan) => pdfPlanPrice(plan, output?.pages),
    };
    const split: ImplOf<Caps['pdf.split']> = {
      invoke: (input) => splitPdf(input),
      price: (_input, output, plan) =>
        pdfPlanPrice(
          plan,
          output?.parts.reduce((n, p) => n + p.pages, 0)
        ),
    };
    const watermark: ImplOf<Caps['pdf.watermark']> = {
      invoke: (input) => watermarkPdf(input),
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
    };
  },
});
