import t from 'tap';
import { PostHog } from 'posthog-node';
import { activate } from '../../helpers/app.js';
import { listeningApp } from '../../helpers/listening-app.js';
import { get, post } from './analytics-app.js';

// PostHog's flags call answered from the account's feature flags: the real posthog-node client,
// with the account's phc_ key, gets for a rule-targeted flag, a rollout and a multivariate flag
// what GET /v1/observability/flags/{key} answers for the same distinct_id and properties.

const targeted = {
  key: 'beta',
  type: 'boolean',
  rules: [{ conditions: [{ attribute: 'country', op: 'in', values: ['DE', 'AT'] }], serve: { variant: 'on' } }],
  fallthrough: { variant: 'off' },
};
const rollout = {
  key: 'new-checkout',
  type: 'boolean',
  fallthrough: {
    rollout: [
      { variant: 'on', weight: 40 },
      { variant: 'off', weight: 60 },
    ],
  },
};
const theme = {
  key: 'theme',
  type: 'json',
  variants: { dark: { bg: '#000' }, light: { bg: '#fff' } },
  off_variant: 'light',
  fallthrough: {
    rollout: [
      { variant: 'dark', weight: 50 },
      { variant: 'light', weight: 50 },
    ],
  },
};

t.test('posthog-node flags from the gateway', async (t) => {
  const { app } = await listeningApp(t);
  const a = await activate(app);
  const b = await activate(app);
  for (const f of [targeted, rollout, theme])
    t.equal((await post(app, a, '/v1/observability/flags', f)).statusCode, 200);
  const pk = (await get(app, a, '/v1/analytics/public-key')).json();
  const ph = new PostHog(pk.public_key, {
    host: pk.host,
    flushAt: 100,
    flushInterval: 0,
    featureFlagsRequestTimeoutMs: 30_000,
  });
  t.teardown(() => ph.shutdown());
  const gateway = async (key: string, id: string, country: string) =>
    (await get(app, a, `/v1/observability/flags/${key}?distinct_id=${id}&country=${country}`)).json();

  const seen = { beta: new Set(), rollout: new Set(), theme: new Set() };
  for (let i = 0; i < 24; i++) {
    const id = `user-${i}`;
    const country = ['DE', 'FR', 'AT', 'US'][i % 4];
    const personProperties = { country };
    const g = {
      beta: await gateway('beta', id, country),
      rollout: await gateway('new-checkout', id, country),
      theme: await gateway('theme', id, country),
    };
    t.equal(await ph.getFeatureFlag('beta', id, { personProperties }), g.beta.value, `beta for ${id} in ${country}`);
    t.equal(await ph.isFeatureEnabled('new-checkout', id, { personProperties }), g.rollout.value, `rollout ${id}`);
    t.equal(await ph.getFeatureFlag('theme', id, { personProperties }), g.theme.variant, `theme ${id}`);
    t.same(await ph.getFeatureFlagPayload('theme', id, undefined, { personProperties }), g.theme.value);
    const all = await ph.getAllFlags(id, { personProperties });
    t.same(all, { beta: g.beta.value, 'new-checkout': g.rollout.value, theme: g.theme.variant }, `all for ${id}`);
    seen.beta.add(g.beta.reason);
    seen.rollout.add(g.rollout.value);
    seen.theme.add(g.theme.variant);
  }
  t.same([...seen.beta].sort(), ['DEFAULT', 'TARGETING_MATCH'], 'the rule matched and did not');
  t.same([...seen.rollout].sort(), [false, true], 'both sides of the rollout');
  t.same([...seen.theme].sort(), ['dark', 'light'], 'both variants');

  t.test('the wire: posthog-js base64 form, preflight, keys', async (t) => {
    const json = JSON.stringify({ token: pk.public_key, distinct_id: 'user-1', person_properties: { country: 'DE' } });
    const form = `data=${encodeURIComponent(Buffer.from(json).toString('base64'))}`;
    const res = await fetch(`${pk.host}/flags/?v=2&config=true&compression=base64`, {
      method: 'POST',
      body: form,
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://shop.example' },
    });
    t.equal(res.status, 200);
    t.equal(res.headers.get('access-control-allow-origin'), '*');
    const body = await res.json();
    t.match(body.flags.beta, { key: 'beta', enabled: true, variant: null, reason: { code: 'condition_match' } });
    t.equal(body.featureFlags.beta, true, 'the older decide shape beside it');
    const old = await fetch(`${pk.host}/decide/?v=3`, { method: 'POST', body: json });
    t.equal((await old.json()).featureFlags.beta, true, '/decide answers the same');
    const pre = await fetch(`${pk.host}/flags/?v=2`, {
      method: 'OPTIONS',
      headers: { origin: 'https://any.example', 'access-control-request-method': 'POST' },
    });
    t.equal(pre.status, 204);
    t.equal(pre.headers.get('access-control-allow-origin'), '*');
    const secret = await fetch(`${pk.host}/flags/?v=2`, {
      method: 'POST',
      body: JSON.stringify({ token: a.key, distinct_id: 'u' }),
    });
    t.equal(secret.status, 401, 'the project key is not a public key');
    t.match(await secret.json(), { error: { code: 'unauthenticated' } });
    const other = (await get(app, b, '/v1/analytics/public-key')).json().public_key;
    const none = await fetch(`${pk.host}/flags/?v=2`, {
      method: 'POST',
      body: JSON.stringify({ token: other, distinct_id: 'u' }),
    });
    t.same((await none.json()).flags, {}, "another account's key sees its own flags, none");
    const missing = await fetch(`${pk.host}/flags/?v=2`, {
      method: 'POST',
      body: JSON.stringify({ token: pk.public_key }),
    });
    const m = await missing.json();
    t.equal(m.errorsWhileComputingFlags, true, 'a rollout without a distinct_id fails alone');
    t.match(m.flags['new-checkout'], { failed: true });
    t.equal(m.flags.beta.enabled, false);
  });
});

t.test('with the observability area off the flags call is 404, capture still works', async (t) => {
  const { app } = await listeningApp(t, { plugins: { observability: false } });
  const a = await activate(app);
  const pk = (await get(app, a, '/v1/analytics/public-key')).json();
  const res = await fetch(`${pk.host}/flags/?v=2`, {
    method: 'POST',
    body: JSON.stringify({ token: pk.public_key, distinct_id: 'u' }),
  });
  t.equal(res.status, 404);
  t.match(await res.json(), { error: { code: 'not_found', message: /observability area/ } });
  const cap = await fetch(`${pk.host}/batch/`, {
    method: 'POST',
    body: JSON.stringify({ api_key: pk.public_key, batch: [{ event: 'x', distinct_id: 'u' }] }),
  });
  t.equal(cap.status, 200);
});
