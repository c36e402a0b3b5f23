import t from 'tap';
import { loadConfig } from '../../../config/load.js';
import { wildcardPattern } from '../../../core/http/cors.js';
import { makeApp, activate } from '../../helpers/app.js';

// database-independent: CORS headers and config; no row is read.

const APP = 'https://app.example.com';

const preflight = (origin: string, method = 'POST', headers = 'authorization, idempotency-key, content-type') => ({
  method: 'OPTIONS' as const,
  url: '/v1/account/keys',
  headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
});

t.test('by default no origin may call the API: no preflight, no CORS header on an answer', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const pre = await app.inject(preflight(APP));
  t.not(pre.statusCode, 204);
  t.notOk(pre.headers['access-control-allow-origin']);
  t.equal(pre.json().error.code, 'method_not_allowed', 'the usual answer, in the conventions shape');
  t.ok(pre.headers['x-request-id']);
  const get = await app.inject({ method: 'GET', url: '/v1/account/keys', headers: { ...a.auth, origin: APP } });
  t.equal(get.statusCode, 200);
  t.notOk(get.headers['access-control-allow-origin'], 'a key-bearing answer is not readable cross-origin');
});

t.test('configured origins: preflights with the headers a client sends, exposed gateway headers', async (t) => {
  const { app } = await makeApp(t, {
    server: { cors: { origins: [APP, 'http://*.dev.example.com:5173'], max_age_seconds: 120 } },
  });
  const a = await activate(app);

  const pre = await app.inject(preflight(APP));
  t.equal(pre.statusCode, 204);
  t.equal(pre.headers['access-control-allow-origin'], APP);
  t.match(String(pre.headers['access-control-allow-methods']), /POST/);
  t.match(String(pre.headers['access-control-allow-methods']), /DELETE/);
  t.equal(pre.headers['access-control-allow-headers'], 'authorization, idempotency-key, content-type');
  t.equal(pre.headers['access-control-max-age'], '120');
  t.notOk(pre.headers['access-control-allow-credentials'], 'keys travel in headers, never cookies');
  t.ok(pre.headers['x-request-id'], 'the preflight answer has a request id too');
  t.match(String(pre.headers.vary), /origin/i);

  const wild = await app.inject(preflight('http://web.dev.example.com:5173', 'DELETE'));
  t.equal(wild.statusCode, 204);
  t.equal(wild.headers['access-control-allow-origin'], 'http://web.dev.example.com:5173');

  for (const other of [
    'https://evil.example',
    'http://app.example.com',
    'https://app.example.com.evil.example',
    'null',
  ]) {
    const no = await app.inject(preflight(other));
    t.notOk(no.headers['access-control-allow-origin'], `${other} is not allowed`);
    t.not(no.statusCode, 204);
  }

  const post = await app.inject({
    method: 'POST',
    url: '/v1/account/keys',
    headers: { ...a.auth, origin: APP, 'idempotency-key': 'k1' },
    payload: { label: 'web' },
  });
  t.equal(post.statusCode, 200);
  t.equal(post.headers['access-control-allow-origin'], APP);
  const exposed = String(post.headers['access-control-expose-headers']).split(/,\s*/);
  for (const h of [
    'x-request-id',
    'x-svc-cost-usd',
    'x-svc-balance-usd',
    'idempotent-replayed',
    'ratelimit-remaining',
    'retry-after',
  ]) {
    t.ok(exposed.includes(h), `${h} is exposed`);
  }

  const denied = await app.inject({ method: 'GET', url: '/v1/account/keys', headers: { origin: APP } });
  t.equal(denied.statusCode, 401);
  t.equal(denied.headers['access-control-allow-origin'], APP, 'an error is readable by the page too');

  const evil = await app.inject({
    method: 'GET',
    url: '/v1/account/keys',
    headers: { ...a.auth, origin: 'https://evil.example' },
  });
  t.equal(evil.statusCode, 200);
  t.notOk(evil.headers['access-control-allow-origin']);

  const missing = await app.inject({ method: 'GET', url: '/v1/no-such-thing', headers: { ...a.auth } });
  t.equal(missing.statusCode, 404, 'the catch-all OPTIONS route does not turn a 404 into a 405');
});

t.test('origins are checked when the config is read', async (t) => {
  for (const bad of [
    'https://app.example.com/',
    'app.example.com',
    'https://*.*.example.com',
    'https://app.example.com/path',
  ]) {
    t.throws(
      () => loadConfig({ object: { server: { cors: { origins: [bad] } } }, env: {} }),
      /server\.cors\.origins/,
      bad
    );
  }
  const ok = loadConfig({ object: { server: { cors: { origins: ['*', 'http://localhost:3000'] } } }, env: {} });
  t.same(ok.server.cors.origins, ['*', 'http://localhost:3000']);
  t.same(loadConfig({ object: {}, env: {} }).server.cors, { origins: [], max_age_seconds: 600 });
});

t.test('origin patterns: one wildcard, no overlap of its two sides', async (t) => {
  t.ok(wildcardPattern('*')('https://x.example'));
  t.ok(wildcardPattern('https://*.example.com')('https://a.b.example.com'));
  t.notOk(wildcardPattern('https://*.example.com')('https://example.com'));
  t.notOk(wildcardPattern('https://a*a')('https://a'), 'head and tail may not share characters');
  t.notOk(wildcardPattern('https://app.example.com')('https://APP.example.com'));
});
