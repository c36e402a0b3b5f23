import { createRequire } from 'node:module';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { TSchema } from '@sinclair/typebox';
import type { CoreConfig } from '../config/schema.js';
import { ConfigError, validateSection } from '../config/load.js';
import { PLUGIN_API_VERSION, SECRET, type AreaDefinition, type VendorDefinition } from './define.js';
import type { LoadedArea } from './context.js';
import { builtinAreas } from '../plugins/builtin.js';
import { builtinVendors } from '../vendors/builtin.js';

/**
 * Import a third-party plugin: a path (relative to `baseDir`) or an npm package name,
 * resolved from the operator's project first (where they `npm install` it), then from ours.
 */
async function importPlugin(spec: string, baseDir: string, where: string): Promise<unknown> {
  let target = spec;
  if (spec.startsWith('.') || isAbsolute(spec)) {
    target = pathToFileURL(resolve(baseDir, spec)).href;
  } else {
    try {
      target = pathToFileURL(createRequire(resolve(baseDir, 'package.json')).resolve(spec)).href;
    } catch {
      /* not in the operator's project: let import() look in ours */
    }
  }
  try {
    const mod = (await import(target)) as { default?: unknown };
    return mod.default ?? mod;
  } catch (e) {
    throw new ConfigError(`${where}: cannot load plugin "${spec}": ${(e as Error).message.split('\n')[0]} (install it with npm install ${spec})`);
  }
}

function checkDefinition(def: any, kind: 'area' | 'vendor', where: string, spec: string) {
  if (!def || typeof def !== 'object' || def.kind !== kind) {
    throw new ConfigError(`${where}: "${spec}" is not a svc-gateway ${kind} plugin (its default export must come from define${kind === 'area' ? 'Area' : 'Vendor'}())`);
  }
  if (typeof def.apiVersion !== 'number' || def.apiVersion > PLUGIN_API_VERSION) {
    throw new ConfigError(`${where}: "${spec}" needs plugin API ${def.apiVersion}, this gateway has ${PLUGIN_API_VERSION}; upgrade svc-gateway`);
  }
  if (typeof def.name !== 'string' || !/^[a-z0-9@][a-z0-9@/._-]*$/.test(def.name)) throw new ConfigError(`${where}: "${spec}" has no valid name`);
  if (kind === 'area' && typeof def.register !== 'function') throw new ConfigError(`${where}: area "${spec}" has no register() function`);
  if (kind === 'vendor' && (typeof def.create !== 'function' || !def.configSchema)) throw new ConfigError(`${where}: vendor "${spec}" needs a configSchema and a create() function`);
}

export async function loadAreas(cfg: CoreConfig, baseDir: string): Promise<LoadedArea[]> {
  const out: LoadedArea[] = [];
  const builtinNames = new Set(builtinAreas.map((a) => a.name));
  for (const def of builtinAreas) {
    const section = cfg.plugins[def.name];
    if (section === false) continue;
    out.push({ def, source: 'builtin', config: checkConfig(def.configSchema, section === true ? {} : section, `plugins.${def.name}`) });
  }
  for (const [name, section] of Object.entries(cfg.plugins)) {
    if (builtinNames.has(name) || section === false) continue;
    const def = (await importPlugin(name, baseDir, `plugins.${name}`)) as AreaDefinition;
    checkDefinition(def, 'area', `plugins.${name}`, name);
    out.push({ def, source: name, config: checkConfig(def.configSchema, section === true ? {} : section, `plugins.${name}`) });
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
    throw new ConfigError(`${where}: unknown vendor adapter "${use}": not built in (${builtinVendors.map((v) => v.name).join(', ')}) and not an installed npm package`);
  }
  checkDefinition(def, 'vendor', where, use);
  return def;
}

export function checkConfig(schema: TSchema | undefined, value: unknown, where: string): Record<string, unknown> {
  if (!schema) {
    if (value && typeof value === 'object' && Object.keys(value).length) throw new ConfigError(`${where}: this plugin takes no configuration`);
    return {};
  }
  return validateSection<Record<string, unknown>>(schema, value ?? {}, where);
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
