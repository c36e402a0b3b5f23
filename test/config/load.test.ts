import t from 'tap';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, ConfigError, substituteEnv } from '../../config/load.js';

function tmpFile(t: { teardown(fn: () => void): void }, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-cfg-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const f = join(dir, 'svc.yaml');
  writeFileSync(f, text);
  return f;
}

function errorOf(fn: () => unknown): Error {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  throw new Error('did not throw');
}

t.test('no config: embedded defaults', async (t) => {
  const c = loadConfig({ env: {} });
  t.equal(c.server.host, '127.0.0.1');
  t.equal(c.server.port, 8787);
  t.equal(c.server.public_url, 'http://127.0.0.1:8787');
  t.match(c.database.url, /^sqlite:.*\.svc\/gateway\.db$/);
  t.equal(c.wallet.trial_credit_usd, 5);
  t.same(Object.keys(c.tiers).sort(), ['free', 'pro']);
});

t.test('${VAR} and ${VAR:-default} are substituted; an unset one names the key', async (t) => {
  const f = tmpFile(t, 'version: 1\nadmin_key: "${ADMIN}"\nserver: { public_url: "${PUB:-https://gw.example.com}" }\n');
  const c = loadConfig({ file: f, env: { ADMIN: 'adm-secret' } });
  t.equal(c.admin_key, 'adm-secret');
  t.equal(c.server.public_url, 'https://gw.example.com');
  const e = errorOf(() => loadConfig({ file: f, env: {} }));
  t.ok(e instanceof ConfigError);
  t.match(e.message, /admin_key: environment variable ADMIN is not set/);
  t.same(substituteEnv({ a: ['x${Y:-}z'] }, {}), { a: ['xz'] });
});

t.test('an integer option from the environment is converted; a fraction there is refused too', async (t) => {
  const numericString = tmpFile(t, 'server: { host: 12345, port: 9003 }\n');
  t.match(
    loadConfig({ file: numericString, env: {} }).server,
    { host: '12345', port: 9003 },
    'a number for a string option is still taken'
  );
  t.equal(loadConfig({ env: { SVC_PORT: '9001' } }).server.port, 9001);
  const f = tmpFile(t, 'server: { port: "${P}" }\n');
  t.equal(loadConfig({ file: f, env: { P: '9002' } }).server.port, 9002);
  t.throws(() => loadConfig({ file: f, env: { P: '9002.5' } }), /server\.port/);
});

t.test('environment overrides and flags', async (t) => {
  const c = loadConfig({
    env: { SVC_PORT: '9999', SVC_HOST: '0.0.0.0', SVC_DATABASE_URL: 'postgres://u@h/db' },
    overrides: { port: 7000 },
  });
  t.equal(c.server.port, 7000);
  t.equal(c.server.host, '0.0.0.0');
  t.equal(c.database.url, 'postgres://u@h/db');
});

t.test('wrong keys and types fail with the key path', async (t) => {
  const cases: [string, RegExp][] = [
    ['server: { port: "http" }', /server\.port/],
    ['wallet: { trial_credit: 5 }', /wallet\.trial_credit/],
    ['nonsense: true', /nonsense/],
    ['vendors: [{ id: "a", use: "x" }, { id: "a", use: "y" }]', /vendors\[1\]\.id: "a" is used twice/],
    ['vendors: [{ id: "A B", use: "x" }]', /vendors\[0\]\.id/],
    // A route's targets are checked at boot, once the embedded engines are there too: test/core/router/selection.test.ts.
    ['default_tier: gold', /default_tier: "gold"/],
    ['- a list', /mapping at the top level/],
    ['server: [', /not valid YAML/],
    // A number is not truncated to fit an integer option (90.5 would run as 90).
    ['server: { port: 8080.5 }', /server\.port: Expected integer \(got 8080\.5\)/],
  ];
  for (const [yaml, re] of cases) {
    const f = tmpFile(t, `${yaml}\n`);
    const e = errorOf(() => loadConfig({ file: f, env: {} }));
    t.ok(e instanceof ConfigError, yaml);
    t.match(e.message, re, yaml);
  }
  t.throws(() => loadConfig({ file: '/nonexistent/svc.yaml', env: {} }), /cannot read config file/);
});
