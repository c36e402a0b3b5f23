import type { Browser, BrowserContext, Page, Route } from 'playwright-core';

/** Whoever holds the tab now: the render job its requests are routed to. */
export interface TabUser {
  handle(route: Route): Promise<void>;
}

/** A request with no job holding the tab (one from a page being left) goes nowhere, as does one that failed. */
async function dispatch(route: Route, user: TabUser | undefined): Promise<void> {
  try {
    if (user) return await user.handle(route);
  } catch {}
  await route.abort('blockedbyclient').catch(() => undefined);
}

/**
 * A browser context with one page, lent to one job at a time. A context is Chromium's
 * profile boundary (cookies, storage, cache, its own renderer processes), and opening its
 * page is most of a warm render's cost, so scriptless jobs reuse one: a page without
 * scripts cannot write storage, routing disables the HTTP cache, and `reset` drops the
 * cookies responses set and navigates away, which cancels whatever the last page still
 * loads. A job with scripts gets a tab of its own, closed after it.
 */
export class Tab {
  user?: TabUser;
  private constructor(
    readonly browser: Browser,
    readonly context: BrowserContext,
    readonly page: Page,
    readonly javascript: boolean
  ) {}

  /** `timeoutMs`: the job's, so no Playwright wait outlives a job cut short. */
  static async open(browser: Browser, javascript: boolean, timeoutMs: number): Promise<Tab> {
    const context = await browser.newContext({ javaScriptEnabled: javascript, serviceWorkers: 'block' });
    try {
      // WebSockets bypass context.route: close every one before it connects.
      await context.routeWebSocket(/.*/, (ws) => ws.close());
      let tab: Tab | undefined;
      // Playwright calls these outside any job's try: one that threw would be an uncaught error,
      // the end of the gateway process. So each catches all, and a request whose handling
      // failed is aborted.
      await context.route('**/*', (route) => dispatch(route, tab?.user));
      // A page's popups (window.open, target=_blank) are not part of its document: closed as they open.
      context.on('page', (opened) => {
        if (tab && opened !== tab.page) opened.close().catch(() => undefined);
      });
      const page = await context.newPage();
      page.setDefaultTimeout(timeoutMs);
      tab = new Tab(browser, context, page, javascript);
      return tab;
    } catch (e) {
      await context.close().catch(() => undefined);
      throw e;
    }
  }

  /**
   * Ready for the next job: the last document replaced by an empty one (which stops its
   * loads), its cookies gone. A page that navigated (a `url` job) goes back to about:blank.
   */
  async reset(): Promise<void> {
    if (this.page.url() === 'about:blank') await this.page.setContent('');
    else await this.page.goto('about:blank', { waitUntil: 'commit' });
    this.user = undefined;
    await this.context.clearCookies();
  }

  get usable(): boolean {
    return this.browser.isConnected() && !this.page.isClosed();
  }

  close(): Promise<void> {
    this.user = undefined;
    return this.context.close().catch(() => undefined);
  }
}
