import t from 'tap';
import { OpenFeature } from '@openfeature/server-sdk';
import { OFREPProvider } from '@openfeature/ofrep-provider';
import { listeningApp } from '../../helpers/listening-app.js';
import { activate } from '../../helpers/app.js';
import { get, post } from './obs-app.js';

// Flags from a browser: the account's public key (its Sentry DSN's) evaluates them on the flags
// GET and over OFREP, from any origin, preflights included; it does nothing else, and the
// project key is never needed.

const flag = {
  key: 'banner',
  type: 'boolean',
  rules: [{ conditions: [{ attribute: 'plan', op: 'eq', value: 'pro' }], serve: { variant: 'on' } }],
  fallthrough: {
    rollout: [
      { variant: 'on', weight: 50 },
      { variant: 'off', weight: 50 },
    ],
  },
};

t.test('flags with the public key', async (t) => {
  const { app, base } = await listeningApp(t);
  const a = await activate(app);
  const b = await activate(app);
  t.equal((await post(app, a, '/v1/observability/flags', flag)).statusCode, 200);
  const pub = (await get(app, a, '/v1/observability/sentry-dsn')).json().public_key;
  const pubB = (await get(app, b, '/v1/observability/sentry-dsn')).json().public_key;
  const origin = 'https://shop.example';
  const browser = { authorization: `Bearer ${pub}`, origin };

  t.test('preflights from any origin', async (t) => {
    for (const [path, method] of [
      ['/v1/observability/flags/banner', 'GET'],
      ['/ofrep/v1/evaluate/flags/banner', 'POST'],
      ['/ofrep/v1/evaluate/flags', 'POST'],
    ]) {
      const res = await fetch(`${base}${path}`, {
        method: 'OPTIONS',
        headers: {
          origin: 'https://any.example',
          'access-control-request-method': method,
          'access-control-request-headers': 'authorization, content-type',
        },
      });
      t.equal(res.status, 204, path);
      t.equal(res.headers.get('access-control-allow-origin'), '*');
      t.match(res.headers.get('access-control-allow-methods'), method);
      t.equal(res.headers.get('access-control-allow-headers'), 'authorization, content-type');
    }
  });

  t.test('the flags GET: the same answers as with the project key', async (t) => {
    const values = new Set();
    for (let i = 0; i < 20; i++) {
      const qs = `distinct_id=v-${i}&plan=${i % 4 ? 'free' : 'pro'}`;
      const res = await fetch(`${base}/v1/observability/flags/banner?${qs}`, { headers: browser });
      t.equal(res.status, 200);
      t.equal(res.headers.get('access-control-allow-origin'), '*');
      const viaPublic = await res.json();
      t.same(viaPublic, (await get(app, a, `/v1/observability/flags/banner?${qs}`)).json());
      values.add(viaPublic.reason);
    }
    t.same([...values].sort(), ['SPLIT', 'TARGETING_MATCH']);
    const missing = await fetch(`${base}/v1/observability/flags/banner`, { headers: browser });
    t.equal(missing.status, 400, 'a rollout needs a distinct_id');
    t.equal(missing.headers.get('access-control-allow-origin'), '*', 'errors are readable from the page too');
    const other = await fetch(`${base}/v1/observability/flags/banner?distinct_id=x`, {
      headers: { authorization: `Bearer ${pubB}` },
    });
    t.equal(other.status, 404, "another account's public key does not see the flag");
    t.equal(other.headers.get('access-control-allow-origin'), null, 'a call naming no origin gets no CORS headers');
    const unknown = await fetch(`${base}/v1/observability/flags/banner?distinct_id=x`, {
      headers: { authorization: `Bearer ${'0'.repeat(32)}`, origin },
    });
    t.equal(unknown.status, 401);
    t.equal(unknown.headers.get('access-control-allow-origin'), '*');
    t.match(await unknown.json(), { error: { code: 'unauthenticated' } });
  });

  t.test('the public key reads flags and nothing else', async (t) => {
    const list = await fetch(`${base}/v1/observability/flags`, { headers: browser });
    t.equal(list.status, 401, 'no listing of definitions');
    const create = await fetch(`${base}/v1/observability/flags`, {
      method: 'POST',
      headers: { ...browser, 'content-type': 'application/json' },
      body: JSON.stringify({ ...flag, key: 'other' }),
    });
    t.equal(create.status, 401, 'no changes');
    const def = await fetch(`${base}/v1/observability/flags/banner/definition`, { headers: browser });
    t.equal(def.status, 401, 'no definition');
  });

  t.test("OFREP with the public key, through OpenFeature's provider", async (t) => {
    const res = await fetch(`${base}/ofrep/v1/evaluate/flags/banner`, {
      method: 'POST',
      headers: { ...browser, 'content-type': 'application/json' },
      body: JSON.stringify({ context: { targetingKey: 'v-0', plan: 'pro' } }),
    });
    t.equal(res.headers.get('access-control-allow-origin'), '*');
    t.match(await res.json(), { key: 'banner', value: true, reason: 'TARGETING_MATCH' });
    const bulk = await fetch(`${base}/ofrep/v1/evaluate/flags`, {
      method: 'POST',
      headers: { ...browser, 'content-type': 'application/json' },
      body: JSON.stringify({ context: { targetingKey: 'v-1' } }),
    });
    t.equal(bulk.status, 200);
    t.equal(bulk.headers.get('access-control-allow-origin'), '*');
    t.match(bulk.headers.get('access-control-expose-headers'), /etag/);
    t.equal((await bulk.json()).flags.length, 1);
    const provider = new OFREPProvider({ baseUrl: base, headers: { Authorization: `Bearer ${pub}` } });
    const domain = `public-${Date.now()}`;
    await OpenFeature.setProviderAndWait(domain, provider);
    t.teardown(() => OpenFeature.clearProviders());
    const client = OpenFeature.getClient(domain);
    for (let i = 0; i < 10; i++) {
      const ctx = { targetingKey: `v-${i}`, plan: 'free' };
      const mine = (await get(app, a, `/v1/observability/flags/banner?distinct_id=v-${i}&plan=free`)).json();
      t.equal(await client.getBooleanValue('banner', !mine.value, ctx), mine.value, `v-${i}`);
    }
  });
});
