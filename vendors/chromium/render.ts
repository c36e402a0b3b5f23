import type { Page, Route } from 'playwright-core';
import { VendorFailure, type PdfRenderInput } from '../../core/kit/vendor.js';

/** Request headers not forwarded: the egress sets its own framing, and decoding is Chromium's job only if asked. */
const DROPPED_REQUEST = new Set(['host', 'connection', 'content-length', 'accept-encoding', 'transfer-encoding']);
/** Response headers Playwright must not replay: the body it is given is whole and undecoded-as-is. */
const DROPPED_RESPONSE = new Set(['content-length', 'transfer-encoding', 'connection', 'content-encoding']);

/** Margins that leave room for a printer's unprintable edge without wasting the page. */
const MARGIN = { top: '12mm', bottom: '12mm', left: '10mm', right: '10mm' };

function forwardHeaders(headers: Record<string, string>, drop: Set<string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !drop.has(k.toLowerCase())));
}

/** Meta refreshes followed before a render gives up on the page (as redirects: egress.max_redirects' default). */
const MAX_REFRESHES = 5;

/**
 * The http(s) URL a zero-delay meta refresh of the page leads to, or undefined; 'navigating'
 * when the page could not be asked (its document is being replaced). Read in Playwright's own
 * world, so it works with scripts off.
 */
async function zeroDelayRefresh(page: Page): Promise<string | undefined> {
  return page
    .evaluate(() => {
      const content = document.querySelector('meta[http-equiv="refresh" i]')?.getAttribute('content');
      const m = content
        ? /^\s*(\d*)(?:\.[\d.]*)?\s*(?:[;,]\s*(?:url\s*=\s*)?['"]?([^'"]*)['"]?)?\s*$/i.exec(content)
        : null;
      if (!m || Number(m[1] || 0) !== 0) return undefined;
      try {
        const target = new URL(m[2]?.trim() || document.URL, document.baseURI);
        return /^https?:$/.test(target.protocol) ? target.href : undefined;
      } catch {
        return undefined;
      }
    })
    .catch(() => 'navigating');
}

/**
 * One render on a tab (tab.ts) lent to it: every request the page makes goes through
 * `input.fetchResource` (the tab's route hands them here while the job holds it).
 */
export class RenderJob {
  /** Why the main document was refused: the egress guard's error, rethrown as the job's. */
  private mainError?: unknown;
  /** The tab's page: its main frame's navigations are the document's own. */
  private page?: Page;
  /** Main-frame navigations asked for so far; for `url`, the first is the document itself. */
  private navigations = 0;
  /** The latest navigation away from the loaded document (a refresh), settled once handled. */
  private away?: Promise<void>;
  private onAway?: () => void;

  constructor(private readonly input: PdfRenderInput) {}

  /** The printed document; its pages are counted by the engine, off the event loop. */
  async run(page: Page): Promise<Buffer> {
    this.page = page;
    const input = this.input;
    try {
      // `html` is written into the tab's about:blank document: no network base, so its relative
      // URLs resolve to nothing, and no navigation (a new document costs a renderer swap).
      if (input.html !== undefined) await page.setContent(input.html, { waitUntil: 'load' });
      else await page.goto(input.url!, { waitUntil: 'load' });
    } catch (e) {
      throw this.mainError ?? e;
    }
    await this.followRefreshes(page);
    // Web fonts load after `load` when only CSS names them; with scripts off this still runs
    // (Playwright evaluates in its own world), and a page that hangs here meets the timeout.
    await page.evaluate(() => document.fonts.ready.then(() => undefined)).catch(() => undefined);
    const data = await page
      .pdf({
        format: input.format,
        landscape: input.orientation === 'landscape',
        printBackground: true,
        margin: MARGIN,
      })
      .catch((e) => Promise.reject(this.mainError ?? e));
    if (this.mainError) throw this.mainError;
    return data;
  }

  /**
   * A meta refresh with no delay is a redirect: the render waits for it and prints where it
   * leads, judged by the guard like any navigation, so one to a refused address fails the
   * render with the guard's error every time (not a PDF of the page before, nor a print
   * failed by the navigation). A refresh with a delay is not waited for.
   */
  private async followRefreshes(page: Page): Promise<void> {
    for (let hop = 0; ; hop++) {
      if (this.mainError) throw this.mainError;
      const target = this.away ? 'navigating' : await zeroDelayRefresh(page);
      if (!target) return;
      if (hop >= MAX_REFRESHES)
        throw new VendorFailure('client_error', `The page refreshes itself more than ${MAX_REFRESHES} times.`, {
          status: 422,
        });
      if (!this.away) await new Promise<void>((r) => (this.onAway = r));
      await this.away;
      this.away = undefined;
      if (this.mainError) throw this.mainError;
      await page.waitForLoadState('load');
    }
  }

  async handle(route: Route): Promise<void> {
    const req = route.request();
    if (req.url().startsWith('data:')) return route.continue();
    let main = false;
    try {
      // A popup's first navigation has no frame yet (frame() throws): it is not the document's.
      main = req.isNavigationRequest() && req.frame() === this.page?.mainFrame();
    } catch {}
    if (main && ++this.navigations > (this.input.url !== undefined ? 1 : 0)) {
      const handled = this.fetch(route, true, true);
      this.away = handled.catch(() => undefined);
      this.onAway?.();
      return handled;
    }
    return this.fetch(route, main, false);
  }

  /** `away`: a navigation from the loaded document; refused, it fails the render like a refused `url`. */
  private async fetch(route: Route, main: boolean, away: boolean): Promise<void> {
    const req = route.request();
    const url = req.url();
    const fatal = main && (this.input.url !== undefined || away);
    try {
      const res = await this.input.fetchResource(url, {
        method: req.method(),
        headers: forwardHeaders(req.headers(), DROPPED_REQUEST),
        body: req.postDataBuffer() ?? undefined,
      });
      if (fatal && (res.status < 200 || res.status >= 400)) {
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
      if (fatal) this.mainError ??= e;
      await route.abort('blockedbyclient').catch(() => undefined);
    }
  }
}
