import t from 'tap';
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Browser } from 'playwright-core';
import { pusherApp } from './pusher-app.js';

// database-independent: pusher-js's browser build in headless Chromium, as a web app uses it. Its
// storage is pusher.test.ts's, which runs on both. Debian's chromium is required (README, .ci/run).

const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'];
const PUSHER_JS = readFileSync(createRequire(import.meta.url).resolve('pusher-js/dist/web/pusher.min.js'), 'utf8');

t.test('pusher-js in a page: public, private and presence channels against the gateway', async (t) => {
  const { app, a, creds, server, port } = await pusherApp(t);

  // The web app: its page, pusher-js, and its auth endpoint that signs with the SDK (the secret stays here).
  const web = createServer((req, res) => {
    if (req.url === '/pusher.js') return res.end(PUSHER_JS);
    if (req.url === '/pusher/auth') {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        const channel = form.get('channel_name')!;
        const presence = channel.startsWith('presence-')
          ? { user_id: 'browser-user', user_info: { ua: 'chromium' } }
          : undefined;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(server.authorizeChannel(form.get('socket_id')!, channel, presence)));
      });
      return;
    }
    res.setHeader('content-type', 'text/html');
    res.end('<!doctype html><script src="/pusher.js"></script><p>app</p>');
  });
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => web.close(() => resolve())));
  const webBase = `http://127.0.0.1:${(web.address() as { port: number }).port}`;

  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, timeout: 60_000 });
  t.teardown(() => browser.close());
  const page = await browser.newPage();
  await page.goto(webBase);
  await page.evaluate(
    ({ key, port }) => {
      const w = window as any;
      w.got = [];
      w.members = null;
      const p = new w.Pusher(key, {
        cluster: 'local',
        wsHost: '127.0.0.1',
        wsPort: port,
        forceTLS: false,
        enabledTransports: ['ws'],
        channelAuthorization: { endpoint: '/pusher/auth', transport: 'ajax' },
      });
      for (const name of ['news', 'private-orders', 'presence-room']) {
        const ch = p.subscribe(name);
        ch.bind('pusher:subscription_succeeded', (m: any) => {
          w.got.push(`subscribed ${name}`);
          if (name === 'presence-room') w.members = m;
        });
        ch.bind('pusher:subscription_error', (e: any) => w.got.push(`error ${name} ${e.status}`));
        ch.bind('update', (d: any) => w.got.push(`${name} ${JSON.stringify(d)}`));
      }
    },
    { key: creds.key, port }
  );
  await page.waitForFunction(() => (window as any).got.filter((g: string) => g.startsWith('subscribed')).length === 3);

  await server.trigger('news', 'update', { via: 'sdk' });
  await server.trigger('private-orders', 'update', { via: 'sdk' });
  const r = await app.inject({
    method: 'POST',
    url: '/v1/realtime/publish',
    payload: { channel: 'presence-room', event: 'update', data: { via: 'api' } },
    headers: a.auth,
  });
  t.equal(r.statusCode, 200);
  await page.waitForFunction(() => (window as any).got.length >= 6);
  const got: string[] = await page.evaluate(() => (window as any).got);
  t.same(got.filter((g) => !g.startsWith('subscribed')).sort(), [
    'news {"via":"sdk"}',
    'presence-room {"via":"api"}',
    'private-orders {"via":"sdk"}',
  ]);
  const members = await page.evaluate(() => ({ count: (window as any).members.count, me: (window as any).members.me }));
  t.same(members, { count: 1, me: { id: 'browser-user', info: { ua: 'chromium' } } });
  const api = (
    await app.inject({ method: 'GET', url: '/v1/realtime/channels/presence-room/presence', headers: a.auth })
  ).json();
  t.same(
    api.members.map((m: any) => m.user_id),
    ['browser-user'],
    'the API lists the page'
  );
});
