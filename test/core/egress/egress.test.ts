import t from 'tap';
import { createServer, type Server, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Egress, type EgressConfig, type Resolver } from '../../../core/egress/egress.js';
import { ApiError } from '../../../core/errors.js';

const base: EgressConfig = {
  allow_private: false,
  allow_loopback: false,
  allow_hosts: [],
  timeout_ms: 5000,
  max_bytes: 1024 * 1024,
  max_redirects: 5,
};

/** Names the tests control: `*.loop.test` are loopback, `public.test` is a public address. */
const resolver: Resolver = async (host) => {
  if (host === 'localhost' || host.endsWith('.loop.test')) return [{ address: '127.0.0.1', family: 4 }];
  if (host === 'v6loop.test') return [{ address: '::1', family: 6 }];
  if (host === 'mixed.test')
    return [
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.7', family: 4 },
    ];
  if (host === 'public.test') return [{ address: '93.184.216.34', family: 4 }];
  throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
};

async function listen(
  t: any,
  handler: (req: IncomingMessage, res: ServerResponse) => void
): Promise<{ server: Server; port: number }> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      })
  );
  return { server, port: (server.address() as AddressInfo).port };
}

function egress(t: any, cfg: Partial<EgressConfig> = {}): Egress {
  const e = new Egress({ ...base, ...cfg }, { resolver });
  t.teardown(() => e.close());
  return e;
}

async function refusal(t: any, p: Promise<unknown>, label: string): Promise<ApiError | undefined> {
  try {
    await p;
    t.fail(`${label} was fetched`);
    return undefined;
  } catch (e) {
    t.ok(e instanceof ApiError, `${label}: ApiError`);
    const err = e as ApiError;
    t.equal(err.code, 'validation_failed', `${label}: validation_failed (${err.message})`);
    t.equal(err.status, 400, label);
    t.equal(err.param, 'url', label);
    return err;
  }
}

t.test('SSRF attempts are refused by default, before any connection', async (t) => {
  let hits = 0;
  const { port } = await listen(t, (_req, res) => {
    hits++;
    res.end('reached');
  });
  const e = egress(t);
  const targets = [
    `http://127.0.0.1:${port}/`,
    `http://localhost:${port}/`,
    `http://0.0.0.0:${port}/`,
    'http://0/',
    'http://10.1.2.3/',
    'http://172.16.0.1/',
    'http://172.31.255.255/',
    'http://192.168.1.1/',
    'http://169.254.169.254/latest/meta-data/',
    'http://100.64.0.1/',
    `http://[::1]:${port}/`,
    `http://[::ffff:127.0.0.1]:${port}/`,
    `http://[::ffff:7f00:1]:${port}/`,
    `http://[0:0:0:0:0:ffff:127.0.0.1]:${port}/`,
    'http://[::127.0.0.1]/',
    'http://[fc00::1]/',
    'http://[fd12:3456::1]/',
    'http://[fd00:ec2::254]/',
    'http://[fe80::1]/',
    'http://[::]/',
    'http://224.0.0.1/',
    'http://255.255.255.255/',
    'http://[ff02::1]/',
    'http://[64:ff9b::7f00:1]/',
    `http://2130706433:${port}/`,
    `http://0177.0.0.1:${port}/`,
    `http://0x7f000001:${port}/`,
    `http://127.1:${port}/`,
    `http://any.loop.test:${port}/`,
    `http://v6loop.test:${port}/`,
    'http://mixed.test/',
    `https://localhost:${port}/`,
  ];
  for (const url of targets) await refusal(t, e.fetch(url), url);
  t.equal(hits, 0, 'the loopback server was never reached');
});

t.test('non-http schemes, credentials in URLs and junk are refused', async (t) => {
  const e = egress(t, { allow_private: true });
  for (const url of [
    'file:///etc/passwd',
    'ftp://example.com/x',
    'gopher://127.0.0.1:70/_x',
    'data:text/plain,hi',
    'javascript:alert(1)',
    'not a url',
    'http://u:p@public.test/',
  ]) {
    const err = await refusal(t, e.fetch(url), url);
    t.ok(err?.details.errors, 'details list the reason');
  }
  // A name that does not resolve is accepted when a target is registered (the receiver may
  // not be deployed yet) and fails at fetch time, where it is resolved and checked again.
  t.equal(String(await e.check('http://nowhere.invalid/hook')), 'http://nowhere.invalid/hook');
  const failed = await e.fetch('http://nowhere.invalid/').then(
    () => null,
    (x) => x
  );
  t.equal(failed?.code, 'fetch_failed');
});

t.test('the message names why and how an operator allows it', async (t) => {
  const e = egress(t);
  try {
    await e.check('http://10.0.0.1/hook', 'target');
    t.fail('allowed');
  } catch (err) {
    const a = err as ApiError;
    t.equal(a.param, 'target');
    t.match(a.message, /private address \(10\.0\.0\.1\)/);
    t.match(a.message, /allow_private/);
    t.same(a.details.errors, [{ param: 'target', message: 'resolves to a private address' }]);
  }
  const meta = egress(t, { allow_private: true });
  await refusal(t, meta.check('http://169.254.169.254/'), 'metadata with allow_private');
  await refusal(t, meta.check('http://[fd00:ec2::254]/'), 'IPv6 metadata with allow_private');
});

t.test('a redirect from an allowed host to a private one is refused at the hop', async (t) => {
  let reachedTarget = 0;
  const target = await listen(t, (_req, res) => {
    reachedTarget++;
    res.end('secret');
  });
  const redirector = await listen(t, (_req, res) => {
    res.writeHead(302, { location: `http://internal.loop.test:${target.port}/admin` });
    res.end();
  });
  const e = egress(t, { allow_hosts: ['hooks.loop.test'] });
  await refusal(t, e.fetch(`http://hooks.loop.test:${redirector.port}/`), 'redirect to another loopback name');
  const toLiteral = await listen(t, (_req, res) => {
    res.writeHead(307, { location: `http://127.0.0.1:${target.port}/` });
    res.end();
  });
  await refusal(t, e.fetch(`http://hooks.loop.test:${toLiteral.port}/`), 'redirect to 127.0.0.1');
  const toFile = await listen(t, (_req, res) => {
    res.writeHead(301, { location: 'file:///etc/passwd' });
    res.end();
  });
  await refusal(t, e.fetch(`http://hooks.loop.test:${toFile.port}/`), 'redirect to file:');
  t.equal(reachedTarget, 0);
});

t.test('the connection goes to the checked address even if the name re-resolves (rebinding)', async (t) => {
  const good = await listen(t, (_req, res) => res.end('checked'));
  let calls = 0;
  // First answer: the allowed loopback name. Any later answer would be a different address.
  const flipping: Resolver = async () =>
    calls++ === 0 ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '10.9.9.9', family: 4 }];
  const e = new Egress({ ...base, allow_hosts: ['rebind.test'] }, { resolver: flipping });
  t.teardown(() => e.close());
  const res = await e.fetch(`http://rebind.test:${good.port}/`);
  t.equal(res.body.toString(), 'checked');
  t.equal(calls, 1, 'resolved once: the connect used the pinned address');
});

t.test('with allow_private a loopback server is reachable; redirects, size and time caps', async (t) => {
  const { port } = await listen(t, (req, res) => {
    if (req.url === '/hello') {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () =>
        res.writeHead(201, { 'x-echo': String(req.headers['x-test'] ?? '-') }).end(`${req.method} ${body}`)
      );
    } else if (req.url === '/redirect') {
      res.writeHead(303, { location: '/hello' }).end();
    } else if (req.url === '/loop') {
      res.writeHead(302, { location: '/loop' }).end();
    } else if (req.url === '/big') {
      res.writeHead(200); // no content-length: the cap must hold while streaming
      const chunk = Buffer.alloc(64 * 1024, 97);
      let n = 0;
      const push = () => {
        while (n++ < 64) if (!res.write(chunk)) return res.once('drain', push);
        res.end();
      };
      push();
    } else if (req.url === '/declared') {
      res.writeHead(200, { 'content-length': String(10 * 1024 * 1024) }).end();
    } else if (req.url === '/slow') {
      setTimeout(() => res.end('late'), 2000).unref();
    } else {
      res.writeHead(404).end();
    }
  });
  const e = egress(t, { allow_private: true, max_redirects: 3 });
  const ok = await e.fetch(`http://127.0.0.1:${port}/hello`, {
    method: 'POST',
    headers: { 'x-test': 'yes' },
    body: 'ping',
  });
  t.equal(ok.status, 201);
  t.equal(ok.headers['x-echo'], 'yes');
  t.equal(ok.body.toString(), 'POST ping');

  const viaName = await e.fetch(`http://localhost:${port}/hello`);
  t.equal(viaName.body.toString(), 'GET ');

  const redirected = await e.fetch(`http://127.0.0.1:${port}/redirect`, { method: 'POST', body: 'x' });
  t.equal(redirected.status, 201);
  t.equal(redirected.body.toString(), 'GET ', '303 turns into a GET without the body');
  t.equal(redirected.url, `http://127.0.0.1:${port}/hello`);

  const manual = await e.fetch(`http://127.0.0.1:${port}/redirect`, { followRedirects: false });
  t.equal(manual.status, 303, 'followRedirects: false returns the 3xx');

  await t.rejects(e.fetch(`http://127.0.0.1:${port}/loop`), {
    code: 'unprocessable',
    message: /more than 3 redirects/,
  });
  await t.rejects(e.fetch(`http://127.0.0.1:${port}/big`, { maxBytes: 100_000 }), {
    code: 'payload_too_large',
    status: 413,
    message: /100000 bytes/,
  });
  await t.rejects(e.fetch(`http://127.0.0.1:${port}/declared`), { code: 'payload_too_large' });
  // /slow never answers in time: fetch_timeout (not its late answer) is the timeout cutting the wait short.
  await t.rejects(e.fetch(`http://127.0.0.1:${port}/slow`, { timeoutMs: 200 }), { code: 'fetch_timeout', status: 504 });

  const closed = await listen(t, () => undefined);
  const deadPort = closed.port;
  await new Promise<void>((r) => {
    closed.server.closeAllConnections();
    closed.server.close(() => r());
  });
  await t.rejects(e.fetch(`http://127.0.0.1:${deadPort}/`), { code: 'fetch_failed', status: 502 });
});

t.test('a public address passes the check', async (t) => {
  const e = egress(t);
  const url = await e.check('https://public.test/path?q=1');
  t.equal(url.hostname, 'public.test');
  await e.check('http://93.184.216.34/');
  await e.check('http://[2606:4700::1]/');
});
