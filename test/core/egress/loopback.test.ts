import t from 'tap';
import { Egress, type EgressConfig, type Resolver } from '../../../core/egress/egress.js';
import { decideLoopback, listensOnLoopbackOnly } from '../../../core/egress/loopback.js';
import { ApiError } from '../../../core/errors.js';
import { makeApp } from '../../helpers/app.js';

// database-independent: egress rules by listen address; no row is read.

const base: EgressConfig = {
  allow_private: false,
  allow_loopback: 'auto',
  allow_hosts: [],
  timeout_ms: 5000,
  max_bytes: 1024 * 1024,
  max_redirects: 5,
};
const resolver: Resolver = async (host) => {
  if (host === 'localhost')
    return [
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ];
  if (host === 'lan.test') return [{ address: '192.168.1.20', family: 4 }];
  throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
};

function egress(t: any, cfg: Partial<EgressConfig>, listenHost: string): Egress {
  const e = new Egress({ ...base, ...cfg }, { resolver, reach: { listenHost } });
  t.teardown(() => e.close());
  return e;
}

async function refused(t: any, e: Egress, url: string): Promise<string> {
  try {
    await e.check(url);
  } catch (err) {
    t.ok(err instanceof ApiError && err.code === 'validation_failed', `${url} is refused`);
    return (err as Error).message;
  }
  t.fail(`${url} was allowed`);
  return '';
}

t.test('which listen addresses are loopback only', async (t) => {
  for (const h of ['127.0.0.1', '::1', 'localhost', 'LOCALHOST.', '127.0.0.2', '::ffff:127.0.0.1'])
    t.ok(listensOnLoopbackOnly(h), h);
  for (const h of ['0.0.0.0', '::', '192.168.1.5', '10.0.0.2', 'gateway.example.com', ''])
    t.notOk(listensOnLoopbackOnly(h), h || '(empty)');
  t.same(decideLoopback('auto', { listenHost: '127.0.0.1' }).allowed, true);
  t.same(decideLoopback('auto', { listenHost: '0.0.0.0' }).allowed, false);
  t.same(decideLoopback(true, { listenHost: '0.0.0.0' }).allowed, true);
  t.same(decideLoopback(false, { listenHost: '::1' }).allowed, false);
});

t.test('auto on a loopback listener: loopback targets pass, nothing else private does', async (t) => {
  const e = egress(t, {}, '127.0.0.1');
  t.equal(e.loopback.allowed, true);
  for (const url of [
    'http://127.0.0.1:3000/hook',
    'http://[::1]:3000/',
    'http://localhost:3000/',
    'http://127.8.9.10/',
  ]) {
    t.equal((await e.check(url)).toString(), new URL(url).toString(), `${url} is allowed`);
  }
  for (const url of [
    'http://10.0.0.1/',
    'http://192.168.1.1/',
    'http://lan.test/',
    'http://169.254.169.254/latest/meta-data/',
    'http://[fe80::1]/',
    'http://[::127.0.0.1]/',
  ]) {
    await refused(t, e, url);
  }
});

t.test('auto on any other listener refuses loopback and says how to allow it', async (t) => {
  for (const host of ['0.0.0.0', '::', '192.168.1.5']) {
    const e = egress(t, {}, host);
    t.equal(e.loopback.allowed, false);
    const msg = await refused(t, e, 'http://127.0.0.1:3000/hook');
    t.match(msg, /loopback/);
    t.match(msg, new RegExp(`listens on ${host.replace(/\./g, '\\.')}`));
    t.match(msg, /egress\.allow_loopback: true/);
    await refused(t, e, 'http://localhost:3000/');
  }
});

t.test('explicit settings win over the listen address; never the metadata service', async (t) => {
  const on = egress(t, { allow_loopback: true }, '0.0.0.0');
  await on.check('http://127.0.0.1:3000/');
  await refused(t, on, 'http://10.1.2.3/');
  await refused(t, on, 'http://169.254.169.254/');
  const off = egress(t, { allow_loopback: false }, '127.0.0.1');
  await refused(t, off, 'http://127.0.0.1:3000/');
});

t.test(
  'auto behind a reverse proxy (loopback listener, public_url elsewhere or trust_proxy) refuses loopback',
  async (t) => {
    const auto = (reach: Parameters<typeof decideLoopback>[1]) => decideLoopback('auto', reach);
    t.equal(
      auto({ listenHost: '127.0.0.1', publicUrl: 'http://localhost:8787' }).allowed,
      true,
      'a loopback public_url'
    );
    t.equal(auto({ listenHost: '127.0.0.1', publicUrl: 'http://[::1]:8787/svc' }).allowed, true);
    const proxied = auto({ listenHost: '127.0.0.1', publicUrl: 'https://gw.example.com' });
    t.equal(proxied.allowed, false, 'public_url on another host');
    t.match(proxied.why, /server\.public_url \(https:\/\/gw\.example\.com\) is not loopback/);
    const trusting = auto({ listenHost: '127.0.0.1', trustProxy: true });
    t.equal(trusting.allowed, false, 'trust_proxy on');
    t.match(trusting.why, /server\.trust_proxy is on/);
    t.equal(decideLoopback(true, { listenHost: '127.0.0.1', trustProxy: true }).allowed, true, 'true still wins');
    // The documented deployment, end to end: the gateway's own /metrics is not a target.
    const nginx = { server: { host: '127.0.0.1', public_url: 'https://gw.example.com', trust_proxy: true } };
    const { app } = await makeApp(t, { ...nginx, egress: { allow_private: false, allow_loopback: 'auto' } });
    t.equal(app.svc.egress.loopback.allowed, false);
    const refusal = await app.svc.egress.check('http://127.0.0.1:8787/metrics').then(
      () => undefined,
      (e) => e
    );
    t.match(refusal, { code: 'validation_failed', message: /loopback.*trust_proxy is on/ });
  }
);
