import { defineArea } from '../../core/define.js';
import { PDF_CAPABILITIES, type PdfPlan } from '../../core/capabilities/pdf.js';
import type { Planned, Planner } from '../../core/router/planner.js';
import { usdToMicros } from '../../core/wallet/money.js';
import { PdfConfig, type PdfConfigT } from './config.js';
import { pdfMigrations } from './migrations.js';
import { registerPdfRoutes } from './routes.js';
import { registerTemplateRoutes } from './template-routes.js';
import { PdfService, RENDER_HINT } from './service.js';
import { TemplateStore } from './templates.js';

const PRICE_KEYS = {
  'pdf.render': 'generate',
  'pdf.merge': 'merge',
  'pdf.split': 'split',
  'pdf.watermark': 'watermark',
  'pdf.ocr': 'ocr',
} as const;
type Cap = keyof typeof PRICE_KEYS;

/**
 * The call's plan, the same for every candidate (engines are priced by the operator, not per
 * vendor): a flat price, or a base plus a page price whose reservation covers `reserve_pages`.
 */
export function pdfPlan(cfg: PdfConfigT, cap: Cap): PdfPlan {
  const key = PRICE_KEYS[cap];
  const base = usdToMicros(cfg[`${key}_price_usd`]);
  const page = usdToMicros(cfg[`${key}_page_price_usd`]);
  if (!page) return { price: base };
  return { price: base + page * cfg.reserve_pages, basePrice: base, pagePrice: page };
}

function samePlan(plan: PdfPlan): Planner<unknown, Planned<PdfPlan>> {
  return (_req, candidates) => candidates.map((c) => ({ id: c.instance.id, plan }));
}

/** PDF: generate (HTML, a page or a template), merge, split, watermark, OCR; on the embedded engines or a vendor. */
export default defineArea({
  name: 'pdf',
  configSchema: PdfConfig,
  capabilities: PDF_CAPABILITIES,
  migrations: pdfMigrations,
  register(app, ctx) {
    const svc = ctx.svc;
    const markup = svc.config.wallet.markup;
    const usd = (micros: number) => Math.ceil(micros * markup) / 1_000_000;
    const pagePrices: Record<string, string> = {};
    for (const cap of Object.keys(PRICE_KEYS) as Cap[]) {
      const plan = pdfPlan(ctx.config, cap);
      svc.router.planner(cap, samePlan(plan), {
        docs: 'docs/pdf.md',
        ...(cap === 'pdf.render' ? { hint: RENDER_HINT } : {}),
      });
      const base = plan.basePrice ?? plan.price;
      // Discovery lists one unit a route: the document when there is a fee for it, else the page.
      const listed =
        base || !plan.pagePrice ? { unit: 'document', micros: base } : { unit: 'page', micros: plan.pagePrice };
      svc.capabilities.set(cap, { ...PDF_CAPABILITIES[cap], listPrice: () => listed });
      if (plan.pagePrice)
        pagePrices[cap] =
          `Charged ${usd(base)} USD a call plus ${usd(plan.pagePrice)} USD a page `
          + `(${cap === 'pdf.ocr' ? 'of the document read' : 'of the result'}), at most ${usd(plan.price)} USD a call.`;
    }
    const templates = new TemplateStore(svc.db, ctx.config.max_template_bytes);
    registerPdfRoutes(app, new PdfService(svc, ctx.config, templates), pagePrices);
    registerTemplateRoutes(app, templates);
  },
});
