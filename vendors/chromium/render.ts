import type { Browser, BrowserContext, Route } from 'playwright-core';
import { VendorFailure } from '../../core/define.js';
import type { PdfOutput, PdfRenderInput } from '../../core/capabilities/pdf.js';

/**
 * The origin an `html` input is served from: a name that cannot resolve (RFC 2606 `.invalid`),
 * answered by the route itself, so the page has no real network base and its relative URLs go
 * nowhere.
 */
const HTML_ORIGIN = 'http://svc-pdf-render.invalid';
const HTML_URL = `${HTML_ORIGIN}/`;

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
 * Render one job in a context of its own (no cookie, cache or storage shared with another
 * tenant's job), every request the page makes routed through `input.fetchResource`. The
 * context is closed when the job ends; closing it is also how a timeout or a gone caller
 * stops the work.
 */
export class RenderJob {
  private context?: BrowserContext;
  /** Why the main document was refused: the egress guard's error, rethrown as the job's. */
  private mainError?: unknown;
  private stopped = false;

  constructor(private readonly input: PdfRenderInput) {}

  async run(browser: Browser): Promise<PdfOutput> {
    const input = this.input;
    const context = await browser.newContext({
      javaScriptEnabled: input.javascript,
      serviceWorkers: 'block',
      acceptDownloads: false,
    });
    this.context = context;
    if (this.stopped) await context.close();
    // WebSockets bypass context.route: close every one before it connects.
    await context.routeWebSocket(/.*/, (ws) => ws.close());
    await context.route('**/*', (route) => this.handle(route));
    const page = await context.newPage();
    try {
      if (input.html !== undefined) await page.goto(HTML_URL, { waitUntil: 'load' });
      else await page.goto(input.url!, { waitUntil: 'load' });
    } catch (e) {
      if (this.mainError) throw this.mainError;
      throw e;
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

  private async handle(route: Route): Promise<void> {
    const req = route.request();
    const url = req.url();
    const main = req.isNavigationRequest() && req.frame().parentFrame() === null;
    if (this.input.html !== undefined && url.startsWith(HTML_ORIGIN)) {
      if (main && url === HTML_URL) {
        return route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: this.input.html });
      }
      return route.abort('blockedbyclient');
    }
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

  /** Stop the job: closing its context ends any navigation or print in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.context?.close().catch(() => undefined);
  }
}
