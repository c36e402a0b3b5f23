import t from 'tap';
import { makeApp, activate } from '../helpers/app.js';
import { PLUGIN_PROJECT, meterCall, scriptedApp } from '../helpers/scripted-app.js';
import type { Tap } from '../helpers/tap.js';

// database-independent: plugin loading and config errors at boot.

const boot = (t: Tap, overrides: Record<string, unknown>) => makeApp(t, overrides, { baseDir: PLUGIN_PROJECT });
t.test('third-party area and vendor load by package name from the operator project', async (t) => {
  const { app } = await scriptedApp(t, [{ id: 'scripted', price_micros: 1234 }]);
  const area = app.svc.areas.find((a) => a.def.name === 'svc-area-meter');
  t.equal(area?.source, 'svc-area-meter');
  const v = app.svc.vendors.get('scripted');
  t.equal(v?.adapter, 'svc-vendor-scripted');
  t.same(Object.keys(v!.instance.capabilities).sort(), ['test.run', 'test.send']);
  t.equal(app.svc.capabilities.get('test.send')?.idempotent, false);

  const a = await activate(app);
  const res = await meterCall(app, a.auth, { input: 'hello' });
  t.equal(res.statusCode, 200, res.body);
  t.same(res.json().output, { echo: 'hello', served_by: 'scripted', model: null, capability: 'test.run' });
  t.equal(res.json().vendor, 'scripted');
});

t.test('plain JSON schema config: defaults applied, env-born strings coerced, secrets redacted', async (t) => {
  const { app } = await boot(t, {
    plugins: { 'svc-area-meter': {} },
    vendors: [
      { id: 'v1', use: 'svc-vendor-scripted', config: { price_micros: '2500', api_key: 'sk-very-secret-value' } },
    ],
  });
  const v = app.svc.vendors.get('v1')!;
  t.same(v.redactedConfig, {
    price_micros: 2500,
    api_key: '[redacted]',
    models: [],
    capabilities: ['test.run', 'test.send'],
  });
  t.notMatch(JSON.stringify(app.svc.vendors.all().map((i) => i.redactedConfig)), /sk-very-secret-value/);
  t.equal(v.instance.capabilities['test.run'].price({}), 2500);
});

t.test('boot fails with the config key path for every kind of bad plugin', async (t) => {
  const good = { id: 'ok', use: 'svc-vendor-scripted', config: {} };
  const cases: [string, Record<string, unknown>, RegExp][] = [
    [
      'unknown adapter',
      { plugins: { 'svc-area-meter': {} }, vendors: [good, { id: 'x', use: 'svc-vendor-nope' }] },
      /^vendors\[1\]\.use: unknown vendor adapter "svc-vendor-nope": not built in \(sandbox-payments(, [a-z0-9-]+)*\) and not an installed npm package \(npm install svc-vendor-nope\)$/,
    ],
    [
      'not a vendor plugin',
      { vendors: [{ id: 'x', use: 'svc-not-a-plugin' }] },
      /^vendors\[0\]\.use: "svc-not-a-plugin" is not a svc-gateway vendor plugin \(its default export must come from defineVendor\(\)\)$/,
    ],
    [
      'a newer plugin API',
      { vendors: [{ id: 'x', use: 'svc-vendor-future' }] },
      /^vendors\[0\]\.use: "svc-vendor-future" needs plugin API 2, this gateway has 1; upgrade svc-gateway$/,
    ],
    [
      'installed but broken',
      { vendors: [{ id: 'x', use: 'svc-vendor-broken' }] },
      /^vendors\[0\]\.use: plugin "svc-vendor-broken" is installed but failed to load: /,
    ],
    [
      'an unknown config key',
      {
        plugins: { 'svc-area-meter': {} },
        vendors: [good, { id: 'x', use: 'svc-vendor-scripted', config: { price: 5 } }],
      },
      /^invalid configuration:\n {2}vendors\[1\]\.config\.price: is not a known key$/,
    ],
    [
      'a config value of the wrong type',
      { vendors: [{ id: 'x', use: 'svc-vendor-scripted', config: { price_micros: 'lots' } }] },
      /^invalid configuration:\n {2}vendors\[0\]\.config\.price_micros: must be integer \(got "lots"\)$/,
    ],
    [
      'an unknown plugin',
      { plugins: { 'svc-area-nope': {} } },
      /^plugins\.svc-area-nope: "svc-area-nope" is not installed \(looked in .*plugin-project\/?\); install it with npm install svc-area-nope$/,
    ],
    [
      'a vendor named as an area',
      { plugins: { 'svc-vendor-scripted': {} } },
      /^plugins\.svc-vendor-scripted: "svc-vendor-scripted" is not a svc-gateway area plugin/,
    ],
    [
      'a vendor whose capability cannot be priced',
      { vendors: [{ id: 'hollow', use: 'svc-vendor-hollow' }] },
      /^vendor "hollow" \(svc-vendor-hollow\): capability "test\.run" needs invoke\(\) and price\(\) functions$/,
    ],
    [
      'a vendor serving a capability no area declares',
      { plugins: { 'svc-area-meter': {} }, vendors: [{ id: 'typo', use: 'svc-vendor-misspelt' }] },
      /^vendor "typo" \(svc-vendor-misspelt\): serves capability "test\.rnu", which no area declares; did you mean "test\.run"\?$/,
    ],
    [
      'a vendor serving a capability its own serves does not name',
      { plugins: { 'svc-area-meter': {} }, vendors: [{ id: 'over', use: 'svc-vendor-overreach' }] },
      /^vendor "over" \(svc-vendor-overreach\): serves capability "test\.send", which its definition's serves does not name; did you mean "test\.run"\?$/,
    ],
    [
      'an area capability without idempotent',
      { plugins: { 'svc-area-vague': {} } },
      /^plugins\.svc-area-vague: area "svc-area-vague" declares capability "test\.notify" without idempotent: true or false$/,
    ],
    [
      'config for a plugin that takes none',
      { plugins: { 'svc-area-meter': { colour: 'blue' } } },
      /^plugins\.svc-area-meter: this plugin takes no configuration$/,
    ],
  ];
  for (const [name, overrides, message] of cases) {
    await t.rejects(boot(t, overrides), { name: 'ConfigError', message }, name);
  }
});

t.test('a plugin path relative to the project directory loads too', async (t) => {
  const { app } = await boot(t, {
    plugins: { 'svc-area-meter': {} },
    vendors: [{ id: 'rel', use: './node_modules/svc-vendor-scripted/index.js', config: {} }],
  });
  t.equal(app.svc.vendors.get('rel')?.adapter, 'svc-vendor-scripted');
  await t.rejects(boot(t, { vendors: [{ id: 'rel', use: './nowhere/plugin.js' }] }), {
    name: 'ConfigError',
    message: /^vendors\[0\]\.use: unknown vendor adapter "\.\/nowhere\/plugin\.js"/,
  });
});
