// long-pole: starts Chromium once (a few seconds) to run the altcha widget as a customer's page does
// database-independent: its storage (the replay table) is tested on both databases by service.test.ts
import t from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { CHROMIUM } from '../../helpers/chromium-render.js';
import { captchaApp, post, siteKey } from './captcha-app.js';

t.test(
  'the widget on a page of another origin fetches, solves and submits; the token verifies once',
  { skip: existsSync(CHROMIUM) ? false : 'no Chromium' },
  async (t) => {
    const { app, a } = await captchaApp(t, { server: { public_url: 'http://127.0.0.1:0' } });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const gw = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    (app.svc.config.server as any).public_url = gw;
    const key = await siteKey(app, a, { allowed_hostnames: ['localhost'] });
    const widget = (await post(app, a, '/v1/captcha/widgets', { site_key_id: key.site_key_id })).json();
    const html = widget.html.replace('<altcha-widget ', '<altcha-widget auto="onload" ');
    const page = `<!doctype html><script src="${widget.script_url}"></script><form>${html}</form>`;
    const site = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(page));
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    t.teardown(() => new Promise<void>((r) => site.close(() => r())));
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    t.teardown(() => browser.close());
    const tab = await browser.newPage();
    // localhost: another origin than the gateway's 127.0.0.1, and the site key's allowed hostname.
    await tab.goto(`http://localhost:${(site.address() as AddressInfo).port}/`);
    const field = tab.locator('input[name="captcha"]');
    await field.waitFor({ state: 'attached', timeout: 30_000 });
    await tab.waitForFunction(
      () => !!(document.querySelector('input[name="captcha"]') as HTMLInputElement | null)?.value,
      null,
      { timeout: 30_000 }
    );
    const token = await field.inputValue();
    t.match((await post(app, a, '/v1/captcha/verify', { token })).json(), {
      valid: true,
      vendor: 'service',
      hostname: 'localhost',
    });
    t.match((await post(app, a, '/v1/captcha/verify', { token })).json(), { valid: false, reason: 'replayed' });
  }
);
