import t from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { Kind, type TSchema } from '@sinclair/typebox';
import { CoreConfigSchema } from '../../config/schema.js';
import { loadConfig } from '../../config/load.js';
import { buildApp } from '../../core/app.js';
import { DIALECT, freshDatabaseUrl } from '../helpers/app.js';

// docs/configuration.md and svc.config.example.yaml promise to cover every key of the config;
// this walks the schema so a key added to config/schema.ts without docs fails here.

const read = (rel: string) => readFileSync(fileURLToPath(new URL(rel, import.meta.url)), 'utf8');
const EXAMPLE = fileURLToPath(new URL('../../svc.config.example.yaml', import.meta.url));
const doc = read('../../docs/configuration.md');
const exampleText = readFileSync(EXAMPLE, 'utf8');

/** What a map key is called in the docs' paths (`tiers.<tier>.burst`). */
const PLACEHOLDER: Record<string, string> = { tiers: '<tier>', routes: '<capability>', plugins: '<area>' };

/**
 * Every key path of a schema: `server.port`, `tiers.<tier>.burst`, `vendors[].id`. Maps (TypeBox
 * Record) get a placeholder segment; only maps and lists of objects with known keys are walked
 * into, since free-form maps (`vendors[].config`) belong to the plugin that reads them.
 */
function keyPaths(schema: TSchema, prefix = ''): string[] {
  const out: string[] = [];
  if (schema[Kind] === 'Object') {
    for (const [k, s] of Object.entries(schema.properties as Record<string, TSchema>)) {
      const p = prefix ? `${prefix}.${k}` : k;
      out.push(p, ...keyPaths(s, p));
    }
  } else if (schema[Kind] === 'Record') {
    const value = Object.values(schema.patternProperties as Record<string, TSchema>)[0];
    if (value[Kind] === 'Object' || value[Kind] === 'Union') {
      const p = `${prefix}.${PLACEHOLDER[prefix] ?? '<name>'}`;
      out.push(p);
      if (value[Kind] === 'Object') out.push(...keyPaths(value, p));
    }
  } else if (schema[Kind] === 'Array' && (schema.items as TSchema)[Kind] === 'Object') {
    out.push(...keyPaths(schema.items as TSchema, `${prefix}[]`));
  }
  return out;
}

/** Whether a parsed YAML document has a path: a placeholder or `[]` matches any entry. */
function has(value: unknown, segments: string[]): boolean {
  if (!segments.length) return value !== undefined;
  const [head, ...rest] = segments;
  if (!value || typeof value !== 'object') return false;
  if (head.startsWith('<')) return Object.values(value).some((v) => has(v, rest));
  if (head.endsWith('[]')) {
    const list = (value as Record<string, unknown>)[head.slice(0, -2)];
    return Array.isArray(list) && list.some((v) => has(v, rest));
  }
  return has((value as Record<string, unknown>)[head], rest);
}

const paths = keyPaths(CoreConfigSchema);

t.test('the schema walk finds the keys it should', async (t) => {
  for (const p of [
    'version',
    'server.port',
    'database.url',
    'tiers.<tier>.burst',
    'vendors[].use',
    'routes.<capability>.targets',
    'plugins.<area>',
    'limits.idempotency_ttl_seconds',
  ]) {
    t.ok(paths.includes(p), p);
  }
  t.notOk(
    paths.some((p) => p.startsWith('vendors[].config.')),
    'free-form adapter config is not walked into'
  );
});

t.test('docs/configuration.md names every key path', async (t) => {
  for (const p of paths) t.ok(doc.includes(`\`${p}\``), `${p} is in docs/configuration.md`);
});

t.test('docs/configuration.md lists every environment override the loader reads', async (t) => {
  const loader = read('../../config/load.ts');
  const vars = new Set([...loader.matchAll(/env\.(SVC_[A-Z_]+)/g)].map((m) => m[1]));
  t.ok(vars.size >= 10, 'the loader reads the SVC_* variables');
  for (const v of vars) t.ok(doc.includes(`| \`${v}\` |`), `${v} has a row in the overrides table`);
});

t.test('svc.config.example.yaml sets every key', async (t) => {
  const example = parseYaml(exampleText);
  for (const p of paths) {
    t.ok(has(example, p.split('.')), `${p} is set in svc.config.example.yaml`);
  }
});

t.test('svc.config.example.yaml gives the schema default of every key that has one', async (t) => {
  const example = parseYaml(exampleText) as Record<string, any>;
  // Only plain keys: map entries (tiers, routes) and list items are examples, not defaults.
  for (const p of paths.filter((p) => !/[<[]/.test(p))) {
    let s: any = CoreConfigSchema;
    let v: any = example;
    for (const k of p.split('.')) {
      s = s?.properties?.[k];
      v = v?.[k];
    }
    if (!s || s.default === undefined || s[Kind] === 'Object' || (typeof v === 'string' && v.includes('${'))) continue;
    if (['tiers', 'vendors', 'routes', 'plugins'].includes(p)) continue;
    t.same(v, s.default, `${p}: the example shows the default`);
  }
});

t.test('svc.config.example.yaml loads, and a gateway builds from it', async (t) => {
  // Give every ${NAME} without a default a value, as an operator would.
  const env: Record<string, string> = {};
  for (const m of exampleText.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)) env[m[1]] = `value-of-${m[1]}`;
  const cfg = loadConfig({ file: EXAMPLE, env });
  t.equal(cfg.version, 1);
  t.equal(cfg.server.port, 8787);
  t.equal(cfg.default_tier, 'free');
  t.same(cfg.tiers.free, { rate_per_minute: 60, burst: 20, price_usd: 0 });
  t.equal(cfg.vendors[0].use, 'sandbox-payments');

  // Boot it for real (areas' and vendors' own sections are checked at boot), in a temp dir.
  const dir = mkdtempSync(join(tmpdir(), 'svc-example-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const url = await freshDatabaseUrl(t, dir);
  const booted = loadConfig({
    file: EXAMPLE,
    env: { ...env, SVC_DATA_DIR: dir, SVC_DATABASE_URL: url, SVC_LOG_LEVEL: 'silent' },
  });
  const app = await buildApp(booted);
  t.teardown(() => app.close());
  await app.ready();
  const ready = await app.inject({ method: 'GET', url: '/readyz' });
  t.equal(ready.statusCode, 200);
  t.equal(app.svc.dialect, DIALECT, 'on the database the suite runs on');
  t.equal(app.svc.vendors.serving('payments.checkout')[0]?.id, 'payments', 'the example route is in force');
});

t.test('an unset ${NAME} without a default is a boot error naming the key', async (t) => {
  t.throws(
    () => loadConfig({ object: { admin_key: '${SVC_DOC_TEST_UNSET}' }, env: {} }),
    /admin_key: environment variable SVC_DOC_TEST_UNSET is not set/
  );
  t.equal(loadConfig({ object: { admin_key: '${SVC_DOC_TEST_UNSET:-fallback}' }, env: {} }).admin_key, 'fallback');
});
