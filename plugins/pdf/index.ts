import { defineArea, PDF_CAPABILITIES, WorkerPool } from '../../core/kit/area.js';
import { PdfConfig } from './config.js';
import { pdfPrice, pdfPrices, PRICE_KEYS, type PdfCap } from './pricing.js';
import { pdfMigrations } from './migrations.js';
import { registerPdfRoutes } from './routes.js';
import { registerTemplateRoutes } from './template-routes.js';
import { PdfService, RENDER_HINT } from './service.js';
import { TemplateStore } from './templates.js';
import type { tasks as templateTasks } from './template-tasks.js';

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
    for (const cap of Object.keys(PRICE_KEYS) as PdfCap[]) {
      const p = pdfPrices(ctx.config, cap);
      // Discovery lists one unit a route: the document when there is a fee for it, else the page.
      const listed = p.base || !p.page ? { unit: 'document', micros: p.base } : { unit: 'page', micros: p.page };
      svc.capabilities.set(cap, { ...PDF_CAPABILITIES[cap], listPrice: () => listed });
      svc.router.price(cap, pdfPrice(p, cap), {
        docs: 'docs/pdf.md',
        ...(cap === 'pdf.render' ? { hint: RENDER_HINT } : {}),
      });
      if (p.page)
        pagePrices[cap] =
          `Charged ${usd(p.base)} USD a call plus ${usd(p.page)} USD a page `
          + `(${cap === 'pdf.ocr' ? 'of the document read' : 'of the result'}), at most ${usd(p.max)} USD a call.`;
    }
    // Template rendering's threads: two at once, one an account, 20 of an account waiting (429 past it).
    const renderPool = new WorkerPool<typeof templateTasks>({
      name: 'pdf-templates',
      caller: import.meta.url,
      module: 'plugins/pdf/template-tasks',
      concurrency: 2,
      perAccount: 1,
      maxQueuedPerAccount: 20,
      maxMemoryMb: 256,
    });
    app.addHook('onClose', () => renderPool.close());
    const templates = new TemplateStore(
      svc.db,
      {
        maxBytes: ctx.config.max_template_bytes,
        maxDepth: ctx.config.max_template_depth,
        renderMs: Math.round(ctx.config.template_render_seconds * 1000),
      },
      renderPool
    );
    registerPdfRoutes(app, new PdfService(svc, ctx.config, templates), pagePrices);
    registerTemplateRoutes(app, templates);
  },
});
