import type { Page, Route } from 'playwright-core';
import { VendorFailure } from '../../core/define.js';
import type { PdfOutput, PdfRenderInput } from '../../core/capabilities/pdf.js';

/** Request headers not forwarded: the egress sets its own framing, and decoding is Chromium's job only if asked. */
const DROPPED_REQUEST = new Set(['host', 'connection', 'content-length', 'accept-encoding', 'transfer-encoding']);
/** Response headers Playwright must not replay: the body it is given is whole and undecoded-as-is. */
const DROPPED_RESPONSE = new Set(['content-length', 'transfer-encoding', 'connection', 'content-encoding']);

/** Margins that leave room for a printer's unprintable edge without wasting the page. */
const MARGIN = { top: '12mm', bottom: '12mm', left: '10mm', right: '10mm' };

function forwardHeaders(headers: Record<string, string>, drop: Set<string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !drop.has(k.toLowerCase())));
}

/** Count pages with pdf-lib, loaded on first use. */
async function pageCount(data: Buffer): Promise<number> {
  const { PDFDocument } = await import('pdf-lib');
  return (await PDFDocument.load(data, { updateMetadata: false })).getPageCount();
}

/**
 * One render on a tab (tab.ts) lent to it: every request the page makes goes through
 * `input.fetchResource` (the tab's route hands them here while the job holds it).
 */
export class RenderJob {
  /** Why the main document was refused: the egress guard's error, rethrown as the job's. */
  private mainError?: unknown;

  constructor(private readonly input: PdfRenderInput) {}

  async run(page: Page): Promise<PdfOutput> {
    const input = this.input;
    try {
      // `html` is written into the tab's about:blank document: no network base, so its relative
      // URLs resolve to nothing, and no navigation (a new document costs a renderer swap).
      if (input.html !== undefined) await page.setContent(input.html, { waitUntil: 'load' });
      else await page.goto(input.url!, { waitUntil: 'load' });
    } catch (e) {
      throw this.mainError ?? e;
    }
    if (this.mainError) throw this.mainError;
    // Web fonts load after `load` when only CSS names them; with scripts off this still runs
    // (Playwright evaluates in its own world), and a page that hangs here meets the timeout.
    await page.evaluate(() => document.fonts.ready.then(() => undefined)).catch(() => undefined);
    const data = await page.pdf({
      format: input.format,
      landscape: input.orientation === 'landscape',
      printBackground: true,
      margin: MARGIN,
    });
    return { data, pages: await pageCount(data) };
  }

  async handle(route: Route): Promise<void> {
    const req = route.request();
    const url = req.url();
    const main = req.isNavigationRequest() && req.frame().parentFrame() === null;
    if (url.startsWith('data:')) return route.continue();
    try {
      const res = await this.input.fetchResource(url, {
        method: req.method(),
        headers: forwardHeaders(req.headers(), DROPPED_REQUEST),
        body: req.postDataBuffer() ?? undefined,
      });
      if (main && this.input.url !== undefined && (res.status < 200 || res.status >= 400)) {
        this.mainError = new VendorFailure('client_error', `url answered HTTP ${res.status}.`, { status: 422 });
        return await route.abort('blockedbyclient');
      }
      await route.fulfill({
        status: res.status,
        headers: forwardHeaders(res.headers, DROPPED_RESPONSE),
        body: res.body,
      });
    } catch (e) {
      // A refused subresource stays blank; a refused main document fails the render with the guard's error.
      if (main && this.input.url !== undefined) this.mainError ??= e;
      await route.abort('blockedbyclient').catch(() => undefined);
    }
  }
}
