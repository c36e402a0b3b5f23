import { createRequire } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { Kind, type TSchema } from '@sinclair/typebox';
import type { CoreConfig } from '../config/schema.js';
import { ConfigError, validateSection } from '../config/load.js';
import { didYouMean, nearest } from '../config/suggest.js';
import { PLUGIN_API_VERSION } from './define.js';
import { SECRET, type VendorDefinition } from './vendor-api.js';
import type { AreaDefinition } from './context.js';
import type { CapabilitySpec } from './capability-spec.js';
import type { LoadedArea } from './context.js';
import { builtinAreas } from '../plugins/builtin.js';
import { builtinVendors } from '../vendors/builtin.js';

/** Thrown when a plugin is not installed at all, as opposed to installed but failing to load. */
class PluginNotFound extends ConfigError {}

const CONDITIONS = new Set(['node', 'import', 'default']);

/** The file an `exports` field maps `key` to for an ESM import, or undefined. */
function exportTarget(exp: unknown, key: string): string | undefined {
  if (typeof exp === 'string') return key === '.' ? exp : undefined;
  if (Array.isArray(exp)) {
    for (const e of exp) {
      const t = exportTarget(e, key);
      if (t) return t;
    }
    return undefined;
  }
  if (!exp || typeof exp !== 'object') return undefined;
  const entries = Object.entries(exp as Record<string, unknown>);
  if (entries.some(([k]) => k.startsWith('.')))
    return key in exp ? exportTarget((exp as Record<string, unknown>)[key], '.') : undefined;
  for (const [cond, t] of entries) {
    if (!CONDITIONS.has(cond)) continue;
    const found = exportTarget(t, key);
    if (found) return found;
  }
  return undefined;
}

/**
 * Resolve a package name as an import from `fromDir` would. require.resolve does this for
 * most packages, but not for ESM-only ones whose `exports` offer only an "import"
 * condition, so for those the package's own `exports` is read here.
 */
function resolvePackage(spec: string, fromDir: string): string | undefined {
  const req = createRequire(join(fromDir, 'package.json'));
  try {
    return req.resolve(spec);
  } catch (e) {
    if ((e as { code?: string }).code !== 'ERR_PACKAGE_PATH_NOT_EXPORTED') return undefined;
  }
  const parts = spec.split('/');
  const nameLen = spec.startsWith('@') ? 2 : 1;
  const name = parts.slice(0, nameLen).join('/');
  const sub = parts.length > nameLen ? `./${parts.slice(nameLen).join('/')}` : '.';
  for (const dir of req.resolve.paths(spec) ?? []) {
    const pkgDir = join(dir, name);
    if (!existsSync(join(pkgDir, 'package.json'))) continue;
    const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { exports?: unknown };
    const target = exportTarget(pkg.exports, sub);
    return target ? resolve(pkgDir, target) : undefined;
  }
  return undefined;
}

const OWN_DIR = fileURLToPath(new URL('.', import.meta.url));

/**
 * Import a third-party plugin: a path (relative to `baseDir`) or an npm package name,
 * resolved from the operator's project first (where they `npm install` it), then from ours.
 */
async function importPlugin(spec: string, baseDir: string, where: string): Promise<unknown> {
  let file: string | undefined;
  if (spec.startsWith('.') || isAbsolute(spec)) {
    const p = resolve(baseDir, spec);
    file = existsSync(p) ? p : undefined;
  } else {
    file = resolvePackage(spec, baseDir) ?? resolvePackage(spec, OWN_DIR);
  }
  if (!file)
    throw new PluginNotFound(
      `${where}: "${spec}" is not installed (looked in ${baseDir}); install it with npm install ${spec}`
    );
  try {
    const mod = (await import(pathToFileURL(file).href)) as { default?: unknown };
    return mod.default ?? mod;
  } catch (e) {
    throw new ConfigError(
      `${where}: plugin "${spec}" is installed but failed to load: ${(e as Error).message.split('\n')[0]}`
    );
  }
}

function checkDefinition(def: any, kind: 'area' | 'vendor', where: string, spec: string) {
  if (!def || typeof def !== 'object' || def.kind !== kind) {
    throw new ConfigError(
      `${where}: "${spec}" is not a svc-gateway ${kind} plugin (its default export must come from define${kind === 'area' ? 'Area' : 'Vendor'}())`
    );
  }
  if (typeof def.apiVersion !== 'number' || def.apiVersion > PLUGIN_API_VERSION) {
    throw new ConfigError(
      `${where}: "${spec}" needs plugin API ${def.apiVersion}, this gateway has ${PLUGIN_API_VERSION}; upgrade svc-gateway`
    );
  }
  if (typeof def.name !== 'string' || !/^[a-z0-9@][a-z0-9@/._-]*$/.test(def.name))
    throw new ConfigError(`${where}: "${spec}" has no valid name`);
  if (kind === 'area' && typeof def.register !== 'function')
    throw new ConfigError(`${where}: area "${spec}" has no register() function`);
  for (const [cap, c] of Object.entries<any>(kind === 'area' ? (def.capabilities ?? {}) : {})) {
    // Failover safety depends on it: guessing could send an email twice.
    if (typeof c?.idempotent !== 'boolean')
      throw new ConfigError(`${where}: area "${spec}" declares capability "${cap}" without idempotent: true or false`);
  }
  if (kind === 'vendor' && (typeof def.create !== 'function' || !def.configSchema))
    throw new ConfigError(`${where}: vendor "${spec}" needs a configSchema and a create() function`);
}

/**
 * Every capability name a vendor may serve: those the loaded areas declare, and the built-in
 * areas' even when switched off (an operator may keep an adapter configured for a disabled area).
 */
export function declaredCapabilities(areas: LoadedArea[]): Map<string, CapabilitySpec> {
  const out = new Map<string, CapabilitySpec>();
  for (const def of [...builtinAreas, ...areas.map((a) => a.def)])
    for (const [k, spec] of Object.entries(def.capabilities ?? {})) out.set(k, spec);
  return out;
}

export async function loadAreas(cfg: CoreConfig, baseDir: string): Promise<LoadedArea[]> {
  const out: LoadedArea[] = [];
  const builtinNames = new Set(builtinAreas.map((a) => a.name));
  for (const def of builtinAreas) {
    const section = cfg.plugins[def.name];
    if (section === false) continue;
    out.push({
      def,
      source: 'builtin',
      config: checkConfig(def.configSchema, section === true ? {} : section, `plugins.${def.name}`),
    });
  }
  for (const [name, section] of Object.entries(cfg.plugins)) {
    if (builtinNames.has(name) || section === false) continue;
    const def = (await importPlugin(name, baseDir, `plugins.${name}`).catch((e) => {
      // A misspelt built-in area is far likelier than a package of that name: say so, not "npm install".
      const meant = e instanceof PluginNotFound ? nearest(name, builtinNames) : undefined;
      if (meant)
        throw new ConfigError(
          `plugins.${name}: no area "${name}". Did you mean "${meant}"? (built in: ${[...builtinNames].join(', ')})`
        );
      throw e;
    })) as AreaDefinition;
    checkDefinition(def, 'area', `plugins.${name}`, name);
    out.push({
      def,
      source: name,
      config: checkConfig(def.configSchema, section === true ? {} : section, `plugins.${name}`),
    });
  }
  return out;
}

export async function resolveVendor(use: string, baseDir: string, where: string): Promise<VendorDefinition> {
  const builtin = builtinVendors.find((v) => v.name === use);
  if (builtin) return builtin;
  let def: VendorDefinition;
  try {
    def = (await importPlugin(use, baseDir, where)) as VendorDefinition;
  } catch (e) {
    if (!(e instanceof PluginNotFound)) throw e;
    const names = builtinVendors.map((v) => v.name);
    const meant = nearest(use, names);
    throw new ConfigError(
      meant
        ? `${where}: unknown vendor adapter "${use}". Did you mean "${meant}"? (built in: ${names.join(', ')})`
        : `${where}: unknown vendor adapter "${use}": not built in (${names.join(', ')}) and not an installed npm package (npm install ${use})`
    );
  }
  checkDefinition(def, 'vendor', where, use);
  return def;
}

// Third-party plugins may give a plain JSON schema rather than a TypeBox one: Ajv checks
// those, with the same defaults, coercion of env-born strings and error format.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(
  new Ajv({ allErrors: true, useDefaults: true, coerceTypes: true, strict: false, verbose: true })
);
ajv.addKeyword(SECRET);
const compiled = new WeakMap<object, ValidateFunction>();

function configIssue(e: ErrorObject, where: string): string {
  let p = e.instancePath
    .replace(/^\//, '')
    .replace(/\/(\d+)(?=\/|$)/g, '[$1]')
    .replace(/\//g, '.');
  const named = (e.params.additionalProperty ?? e.params.missingProperty) as string | undefined;
  if (named) p = p ? `${p}.${named}` : named;
  const full = [where, p].filter(Boolean).join('.').replace(/\.\[/g, '[');
  const known = Object.keys((e.parentSchema as { properties?: object } | undefined)?.properties ?? {});
  const msg =
    e.keyword === 'additionalProperties'
      ? `is not a known key${didYouMean(named ?? '', known)}`
      : (e.message ?? 'is invalid');
  return `  ${full}: ${msg}${e.data !== undefined && typeof e.data !== 'object' ? ` (got ${JSON.stringify(e.data)})` : ''}`;
}

export function checkConfig(schema: TSchema | undefined, value: unknown, where: string): Record<string, unknown> {
  if (!schema) {
    if (value && typeof value === 'object' && Object.keys(value).length)
      throw new ConfigError(`${where}: this plugin takes no configuration`);
    return {};
  }
  if (Kind in schema) return validateSection<Record<string, unknown>>(schema, value ?? {}, where);
  let validate = compiled.get(schema);
  if (!validate) {
    try {
      validate = ajv.compile(schema);
    } catch (e) {
      throw new ConfigError(`${where}: the plugin's configSchema is not a valid JSON schema: ${(e as Error).message}`);
    }
    compiled.set(schema, validate);
  }
  const v = structuredClone(value ?? {});
  if (!validate(v))
    throw new ConfigError(
      `invalid configuration:\n${validate
        .errors!.slice(0, 10)
        .map((e) => configIssue(e, where))
        .join('\n')}`
    );
  return v as Record<string, unknown>;
}

/** The config with every field its schema marks secret replaced by "[redacted]". */
export function redact(schema: TSchema | undefined, value: unknown): any {
  if (!schema || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => redact((schema as any).items, v));
  const out: Record<string, unknown> = {};
  const props = (schema as any).properties ?? {};
  for (const [k, v] of Object.entries(value)) {
    const s = props[k];
    out[k] = s?.[SECRET] ? (v === '' || v === undefined ? v : '[redacted]') : redact(s, v);
  }
  return out;
}

/**
 * The built-in adapters the operator did not configure: the app adds the embedded defaults
 * among them and a BYOK-only instance of each that takes callers' keys. The loader is the one
 * core file that knows the built-in registries.
 */
export function unconfiguredBuiltins(configured: Set<string>): VendorDefinition[] {
  return builtinVendors.filter((d) => !configured.has(d.name));
}
