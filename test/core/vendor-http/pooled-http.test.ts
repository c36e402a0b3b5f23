import t from 'tap';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { VendorFailure } from '../../../core/router/failure.js';
import { PooledHttp } from '../../../core/vendor-http/pooled-http.js';

/** A loopback server answering from a table by path, counting the TCP connections it gets. */
async function server(t: Tap, routes: Record<string, (res: import('node:http').ServerResponse) => void>) {
  const s: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () =>
      (
        routes[req.url ?? '']
        ?? ((r) => {
          r.writeHead(404);
          r.end();
        })
      )(res)
    );
  });
  let connections = 0;
  s.on('connection', () => connections++);
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
  t.teardown(
    () =>
      new Promise<void>((ok) => {
        s.closeAllConnections();
        s.close(() => ok());
      })
  );
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, connections: () => connections };
}
type Tap = Parameters<Parameters<typeof t.test>[1]>[0];

const post = (signal = new AbortController().signal) => ({
  method: 'POST' as const,
  headers: { 'content-type': 'application/json' },
  body: '{}',
  signal,
});

async function failure(p: Promise<unknown>): Promise<VendorFailure> {
  try {
    await p;
  } catch (e) {
    if (e instanceof VendorFailure) return e;
    throw e;
  }
  throw new Error('expected a VendorFailure');
}

t.test('calls reuse kept-alive connections and read JSON', async (t) => {
  const srv = await server(t, {
    '/ok': (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"n":1}');
    },
  });
  const http = new PooledHttp('v');
  t.teardown(() => http.close());
  for (let i = 0; i < 5; i++) {
    const ac = new AbortController();
    const res = await http.request(`${srv.url}/ok`, post(ac.signal));
    t.equal(res.status, 200);
    t.same(await http.json(res, ac.signal), { n: 1 });
  }
  // undici may open a second connection when a call follows the last one's end in the same
  // tick (the first is not marked idle yet); never one a call.
  t.ok(srv.connections() <= 2, `five calls in a row, ${srv.connections()} connections`);
});

t.test('failures map to the router kinds', async (t) => {
  const srv = await server(t, {
    '/429': (res) => {
      res.writeHead(429, { 'retry-after': '4', 'content-type': 'application/json' });
      res.end('{"error":{"message":"slow down"}}');
    },
    '/401': (res) => {
      res.writeHead(401);
      res.end('{"error":{"message":"bad key"}}');
    },
    '/html': (res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>');
    },
  });
  const http = new PooledHttp('v');
  t.teardown(() => http.close());
  const rl = await failure(http.request(`${srv.url}/429`, post()));
  t.equal(rl.kind, 'rate_limited');
  t.equal(rl.retryAfterMs, 4000);
  t.match(rl.message, /v answered 429: slow down/);
  t.equal((await failure(http.request(`${srv.url}/401`, post()))).kind, 'auth');
  const ac = new AbortController();
  t.equal(
    (await failure(http.request(`${srv.url}/html`, post(ac.signal)).then((r) => http.json(r, ac.signal)))).kind,
    'unavailable'
  );
  // Port 1 on loopback: nothing listens there, so the request never left.
  t.equal((await failure(http.request('http://127.0.0.1:1/x', post()))).kind, 'not_sent');
});

t.test('an aborted call rejects with the signal reason', async (t) => {
  const srv = await server(t, { '/hang': () => undefined });
  const http = new PooledHttp('v');
  t.teardown(() => http.close());
  const ac = new AbortController();
  const reason = new Error('deadline');
  setTimeout(() => ac.abort(reason), 50);
  await t.rejects(http.request(`${srv.url}/hang`, post(ac.signal)), reason);
});
