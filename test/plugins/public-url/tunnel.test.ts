import { createHash } from 'node:crypto';
import { once } from 'node:events';
import http, { type IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import t from 'tap';
import WebSocket, { WebSocketServer } from 'ws';
import { activate } from '../../helpers/app.js';
import { listeningApp } from '../../helpers/listening-app.js';
import { until } from '../../helpers/wait.js';
import { TunnelClient } from '../../../plugins/public-url/tunnel-client.js';

// A tunnel end to end on loopback: a local app, the gateway listening, and the tunnel client
// (the CLI's) connected over its WebSocket; the public side talks to {sub}.localhost by Host.

const MIB = 1024 * 1024;

interface Res {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

function call(
  port: number,
  host: string,
  path: string,
  opts: { method?: string; body?: Readable | string; headers?: Record<string, string> } = {}
): Promise<Res> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path, method: opts.method ?? 'GET', headers: { ...opts.headers, host }, agent: false },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c) => parts.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts) }));
      }
    );
    req.on('error', reject);
    if (opts.body instanceof Readable) opts.body.pipe(req);
    else req.end(opts.body);
  });
}

/** `n` bytes of a repeatable pattern, produced as they are read. */
function pattern(n: number): Readable {
  let sent = 0;
  const chunk = Buffer.alloc(64 * 1024);
  for (let i = 0; i < chunk.length; i++) chunk[i] = (i * 31) & 0xff;
  return new Readable({
    read() {
      if (sent >= n) return void this.push(null);
      const c = chunk.subarray(0, Math.min(chunk.length, n - sent));
      sent += c.length;
      this.push(c);
    },
  });
}

async function localApp(t: Tap) {
  let release: () => void = () => undefined;
  const server = http.createServer((req: IncomingMessage, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/headers') return res.end(JSON.stringify({ headers: req.headers, url: req.url }));
    if (url.pathname === '/echo') return req.pipe(res);
    if (url.pathname === '/download') return pattern(Number(url.searchParams.get('n'))).pipe(res);
    if (url.pathname === '/upload') {
      const h = createHash('sha256');
      let n = 0;
      req.on('data', (c) => {
        n += c.length;
        h.update(c);
      });
      return req.on('end', () => res.end(JSON.stringify({ n, sha: h.digest('hex') })));
    }
    if (url.pathname === '/stream') {
      res.writeHead(200, { 'content-type': 'text/plain', connection: 'x-private', 'x-private': 'secret' });
      res.write('first;');
      new Promise<void>((r) => (release = r)).then(() => res.end('second'));
      return;
    }
    res.writeHead(404).end();
  });
  const wss = new WebSocketServer({ server });
  wss.on('connection', (ws) => ws.on('message', (m, bin) => ws.send(m, { binary: bin })));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    for (const c of wss.clients) c.terminate();
    wss.close();
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });
  return { port: (server.address() as { port: number }).port, release: () => release() };
}

type Tap = typeof t;

async function connected(t: Tap, record: { connect_url: string }, secret: string, port: number) {
  const client = new TunnelClient({ connectUrl: record.connect_url, secret, port });
  t.teardown(() => client.stop());
  const up = once(client, 'connected');
  client.start();
  await up;
  return client;
}

t.test('a tunnel carries requests, streams, big bodies, many at once and WebSockets', async (t) => {
  const { app, base } = await listeningApp(t, {
    plugins: {
      'public-url': {
        price_per_gib_usd: 10,
        billing_interval_seconds: 1,
        tier_limits: { free: { max_tunnels: 1, bytes_per_second: 1024 * MIB } },
      },
    },
  });
  const gw = Number(new URL(base).port);
  const a = await activate(app);
  const local = await localApp(t);
  const rec = (
    await app.inject({ method: 'POST', url: '/v1/public-url', headers: a.auth, payload: { subdomain: 'demo' } })
  ).json();
  t.equal(rec.url, `http://demo.localhost:${gw}`);
  const offline = await call(gw, `demo.localhost:${gw}`, '/headers');
  t.equal(offline.status, 502);
  t.equal(JSON.parse(String(offline.body)).error.code, 'tunnel_not_connected');
  await connected(t, rec, a.key, local.port);
  const host = `demo.localhost:${gw}`;
  t.equal(
    (await app.inject({ method: 'GET', url: `/v1/public-url/${rec.url_id}`, headers: a.auth })).json().state,
    'connected'
  );

  const h = await call(gw, host, '/headers?q=1', {
    headers: {
      connection: 'x-secret, keep-alive',
      'x-secret': 'hop',
      'proxy-authorization': 'Basic abc',
      'x-forwarded-for': '203.0.113.9',
      'x-forwarded-host': 'evil.example',
      'x-app': 'kept',
    },
  });
  t.equal(h.status, 200);
  const seen = JSON.parse(String(h.body));
  t.equal(seen.url, '/headers?q=1');
  t.equal(seen.headers.host, host, 'the public Host reaches the app');
  t.equal(seen.headers['x-app'], 'kept');
  t.notOk(seen.headers['x-secret'], 'a header named in Connection is not forwarded');
  t.notOk(seen.headers['proxy-authorization'], 'hop-by-hop headers are not forwarded');
  t.equal(seen.headers['x-forwarded-for'], '203.0.113.9, 127.0.0.1');
  t.equal(seen.headers['x-forwarded-proto'], 'http');
  t.equal(seen.headers['x-forwarded-host'], host, 'set by the gateway, not the caller');

  // Streamed: the first part arrives while the app still holds the second.
  const first = await new Promise<{ res: IncomingMessage; chunk: string }>((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port: gw, path: '/stream', headers: { host }, agent: false }, (res) =>
      res.once('data', (c) => resolve({ res, chunk: String(c) }))
    );
    req.on('error', reject);
  });
  t.equal(first.chunk, 'first;');
  t.notOk(first.res.headers['x-private'], "the app's Connection-named header is dropped");
  let rest = '';
  first.res.on('data', (c) => (rest += c));
  local.release();
  await once(first.res, 'end');
  t.equal(rest, 'second');

  // 200 at once over the one tunnel, each its own answer.
  const many = await Promise.all(
    Array.from({ length: 200 }, (_, i) => call(gw, host, '/echo', { method: 'POST', body: `body-${i}` }))
  );
  t.ok(
    many.every((r, i) => r.status === 200 && String(r.body) === `body-${i}`),
    '200 concurrent requests answered'
  );

  // 100 MiB each way, never held whole: resident memory stays far below the body's size.
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const up = await call(gw, host, '/upload', { method: 'POST', body: pattern(100 * MIB) });
  const want = createHash('sha256');
  for await (const c of pattern(100 * MIB)) want.update(c);
  const digest = want.digest('hex');
  t.same(JSON.parse(String(up.body)), { n: 100 * MIB, sha: digest });
  const down = await new Promise<{ n: number; sha: string }>((resolve, reject) => {
    http
      .get(
        { host: '127.0.0.1', port: gw, path: `/download?n=${100 * MIB}`, headers: { host }, agent: false },
        (res) => {
          const hash = createHash('sha256');
          let n = 0;
          res.on('data', (c) => {
            n += c.length;
            hash.update(c);
          });
          res.on('end', () => resolve({ n, sha: hash.digest('hex') }));
        }
      )
      .on('error', reject);
  });
  clearInterval(sample);
  t.same(down, { n: 100 * MIB, sha: digest });
  t.comment(`rss grew ${((peak - rss0) / MIB).toFixed(1)} MiB while 200 MiB passed`);
  t.ok(peak - rss0 < 80 * MIB, 'no body was buffered whole');

  // A WebSocket upgrade through the tunnel, text and binary echoed.
  const ws = new WebSocket(`ws://127.0.0.1:${gw}/chat`, { headers: { host } });
  await once(ws, 'open');
  ws.send('hello');
  t.equal(String((await once(ws, 'message'))[0]), 'hello');
  ws.send(Buffer.from([1, 2, 3]));
  t.same([...((await once(ws, 'message'))[0] as Buffer)], [1, 2, 3]);
  ws.close();

  // Metered: the bytes are on the record and charged to the wallet.
  await until('bytes charged', async () => {
    const r = (await app.inject({ method: 'GET', url: `/v1/public-url/${rec.url_id}`, headers: a.auth })).json();
    return r.bytes_in > 100 * MIB && r.bytes_out > 100 * MIB;
  });
  const balance = async () =>
    (await app.inject({ method: 'GET', url: '/v1/account/balance', headers: a.auth })).json().balance_usd;
  await until('the wallet charged', async () => (await balance()) < 5 - 0.0019);
});

t.test('a tunnel serves its own Host only; the API is never a tunnel', async (t) => {
  const { app, base } = await listeningApp(t);
  const gw = Number(new URL(base).port);
  const a = await activate(app);
  const b = await activate(app);
  const appA = await localApp(t);
  const appB = await localApp(t);
  const mk = async (who: typeof a, subdomain: string) =>
    (await app.inject({ method: 'POST', url: '/v1/public-url', headers: who.auth, payload: { subdomain } })).json();
  const ra = await mk(a, 'alpha');
  const rb = await mk(b, 'beta');

  // Wrong secrets: refused before the socket opens.
  for (const secret of [b.key, 'tun_wrong', 'sk_live_nothing']) {
    const c = new TunnelClient({ connectUrl: ra.connect_url, secret, port: appA.port });
    const [status] = await (async () => {
      const r = once(c, 'refused');
      c.start();
      return r;
    })();
    c.stop();
    t.ok(status === 404 || status === 401, `refused (${status})`);
  }
  const ca = await connected(t, ra, a.key, appA.port);
  await connected(t, rb, b.key, appB.port);
  const who = async (host: string) => JSON.parse(String((await call(gw, host, '/headers')).body));
  t.equal((await who(`alpha.localhost:${gw}`)).headers.host, `alpha.localhost:${gw}`);
  // Each Host reaches its own app (the apps answer with the Host they saw; the ports differ).
  const viaB = await call(gw, `beta.localhost:${gw}`, '/headers');
  t.equal(JSON.parse(String(viaB.body)).headers.host, `beta.localhost:${gw}`);
  t.equal((await call(gw, `gamma.localhost:${gw}`, '/headers')).status, 404, 'unknown subdomain');
  const twoLabels = await call(gw, `a.b.localhost:${gw}`, '/v1/version');
  t.ok(JSON.parse(String(twoLabels.body)).version, 'two labels are no tunnel: the API answers');
  for (const apiHost of [`127.0.0.1:${gw}`, `localhost:${gw}`]) {
    const v = await call(gw, apiHost, '/v1/version');
    t.equal(v.status, 200, `${apiHost} is the API`);
    t.ok(JSON.parse(String(v.body)).version);
  }

  // Reconnect: the tunnel comes back on the same URL.
  const down = once(ca, 'disconnected');
  const back = once(ca, 'connected');
  await app.inject({ method: 'GET', url: '/v1/version' });
  (ca as unknown as { ws: WebSocket }).ws.terminate();
  await down;
  t.equal((await back)[0], ra.url, 'same URL after a reconnect');
  t.equal(
    (await call(gw, `alpha.localhost:${gw}`, '/echo', { method: 'POST', body: 'again' })).body.toString(),
    'again'
  );
});
