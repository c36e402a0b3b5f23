import t from 'tap';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Egress, type EgressConfig, type Resolver } from '../../../core/egress/egress.js';
import { ForwardProxy, type ProxyDecision } from '../../../core/egress/forward-proxy.js';

// The forward proxy a browser is pointed at: plain HTTP and CONNECT, each connection checked
// by the egress guard after resolution and sent to the checked address.

const base: EgressConfig = {
  allow_private: false,
  allow_loopback: false,
  allow_hosts: [],
  timeout_ms: 5000,
  max_bytes: 1024 * 1024,
  max_redirects: 5,
};
// `rebind.test` is a name that resolves to loopback: the guard must judge the address, not the name.
const resolver: Resolver = async (host) => {
  if (host === 'rebind.test') return [{ address: '127.0.0.1', family: 4 }];
  throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
};

async function setup(t: any, cfg: Partial<EgressConfig>) {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url} host=${req.headers.host}`);
    res.end('hello');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
  const egress = new Egress({ ...base, ...cfg }, { resolver });
  t.teardown(() => egress.close());
  const decisions: ProxyDecision[] = [];
  const proxy = await ForwardProxy.start(egress, (d) => decisions.push(d));
  t.teardown(() => proxy.close());
  return { hits, port: (server.address() as AddressInfo).port, proxy: new URL(proxy.url), decisions };
}

/** A plain-HTTP request through the proxy: the status and body. */
function viaProxy(proxy: URL, target: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers = target.startsWith('http') ? { host: new URL(target).host } : {};
    const req = request({ host: proxy.hostname, port: proxy.port, path: target, headers });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A CONNECT through the proxy, then an HTTP/1.0 GET in the tunnel: the proxy's status and what came back. */
function tunnel(proxy: URL, authority: string): Promise<{ status: number; answer: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: proxy.hostname, port: proxy.port, method: 'CONNECT', path: authority });
    req.on('connect', (res, socket) => {
      if (res.statusCode !== 200) return (socket.destroy(), resolve({ status: res.statusCode!, answer: '' }));
      let answer = '';
      socket.on('data', (c) => (answer += c));
      socket.on('end', () => resolve({ status: 200, answer }));
      socket.write(`GET /tunnelled HTTP/1.0\r\nHost: ${authority}\r\n\r\n`);
    });
    req.on('error', reject);
    req.end();
  });
}

t.test('allowed targets are proxied, plain and tunnelled', async (t) => {
  const { hits, port, proxy, decisions } = await setup(t, { allow_loopback: true });
  t.same(await viaProxy(proxy, `http://127.0.0.1:${port}/plain?q=1`), { status: 200, body: 'hello' });
  t.match((await tunnel(proxy, `127.0.0.1:${port}`)).answer, /^HTTP\/1\.1 200[\s\S]*hello$/);
  t.same(hits, [`GET /plain?q=1 host=127.0.0.1:${port}`, `GET /tunnelled host=127.0.0.1:${port}`]);
  t.ok(decisions.every((d) => d.allowed));
});

t.test('refused targets get 403 and never a connection, whatever the name or spelling', async (t) => {
  const { hits, port, proxy, decisions } = await setup(t, {});
  for (const host of ['127.0.0.1', 'rebind.test', '[::ffff:127.0.0.1]', '2130706433', 'localhost.']) {
    t.equal((await viaProxy(proxy, `http://${host}:${port}/x`)).status, 403, `http via ${host}`);
    t.equal((await tunnel(proxy, `${host}:${port}`)).status, 403, `CONNECT ${host}`);
  }
  t.equal((await tunnel(proxy, `169.254.169.254:80`)).status, 403, 'the metadata service');
  t.equal((await viaProxy(proxy, '/not-absolute')).status, 400, 'a request not meant for a proxy');
  t.same(hits, [], 'nothing reached the loopback server');
  t.ok(decisions.every((d) => !d.allowed && d.reason));
});
