import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { Value, ValueErrorType, type ValueError } from '@sinclair/typebox/value';
import type { TSchema } from '@sinclair/typebox';
import { CoreConfigSchema, type CoreConfig } from './schema.js';
import { didYouMean } from './suggest.js';

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export interface LoadOptions {
  /** Path of the YAML file; none means the embedded defaults. */
  file?: string;
  /** An already parsed object (tests); merged under env overrides like a file. */
  object?: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
  /** Command-line flags, applied last. */
  overrides?: { port?: number; host?: string; data_dir?: string };
}

const VAR = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Replace ${NAME} and ${NAME:-default} in every string of a parsed document. */
export function substituteEnv(value: unknown, env: NodeJS.ProcessEnv, path = ''): unknown {
  if (typeof value === 'string') {
    return value.replace(VAR, (_m, name: string, def: string | undefined) => {
      const v = env[name];
      if (v !== undefined) return v;
      if (def !== undefined) return def;
      throw new ConfigError(
        `${path || '(root)'}: environment variable ${name} is not set and has no default (write \${${name}:-default} to give one)`
      );
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => substituteEnv(v, env, `${path}[${i}]`));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = substituteEnv(v, env, path ? `${path}.${k}` : k);
    return out;
  }
  return value;
}

/**
 * Fill defaults, recursing into records and arrays too (TypeBox's Value.Default stops at a
 * Record's values, so `tiers: { gold: { rate_per_minute: 5 } }` would miss its `burst`).
 */
export function applyDefaults(schema: any, value: unknown): unknown {
  if (value === undefined && schema?.default !== undefined) value = structuredClone(schema.default);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return schema?.items ? value.map((v) => applyDefaults(schema.items, v)) : value;
  const obj = value as Record<string, unknown>;
  if (schema?.properties) {
    for (const [k, s] of Object.entries<any>(schema.properties)) {
      const v = applyDefaults(s, obj[k]);
      if (v !== undefined) obj[k] = v;
    }
  }
  const each = schema?.patternProperties ? Object.values<any>(schema.patternProperties)[0] : undefined;
  if (each) for (const k of Object.keys(obj)) obj[k] = applyDefaults(each, obj[k]);
  return obj;
}

/**
 * Numbers that Value.Convert changed: it truncates 90.5 (or "90.5" from an environment
 * variable) to 90 for an integer, which would silently run with a value nobody wrote.
 */
function truncatedNumbers(
  before: unknown,
  after: unknown,
  path: string,
  out: Array<{ path: string; value: unknown }>
): void {
  // Only a number that came out as another number: 12345 for a string option becomes "12345", as before.
  if (typeof after === 'number' && (typeof before === 'number' || typeof before === 'string')) {
    if (Number(before) !== after) out.push({ path, value: before });
    return;
  }
  if (!before || typeof before !== 'object' || !after || typeof after !== 'object') return;
  for (const [k, v] of Object.entries(before))
    truncatedNumbers(v, (after as Record<string, unknown>)[k], `${path}/${k}`, out);
}

/** What is wrong, in the words an operator needs: the allowed values, the key a typo meant. */
function issueMessage(e: Pick<ValueError, 'type' | 'schema' | 'path' | 'message'>): string {
  const s = e.schema as { anyOf?: Array<{ const?: unknown }>; properties?: Record<string, unknown> };
  if (Array.isArray(s?.anyOf) && s.anyOf.length && s.anyOf.every((b) => b.const !== undefined)) {
    return `must be one of ${s.anyOf.map((b) => String(b.const)).join(', ')}`;
  }
  if (e.type === ValueErrorType.ObjectAdditionalProperties) {
    return `is not a known key${didYouMean(e.path.split('/').pop() ?? '', Object.keys(s?.properties ?? {}))}`;
  }
  return e.message;
}

/** Apply defaults, coerce env-born strings, and validate; throw with every offending key path. */
export function validateSection<T>(schema: TSchema, value: unknown, where: string): T {
  const filled = applyDefaults(schema, structuredClone(value ?? {}));
  const v = Value.Convert(schema, structuredClone(filled));
  const truncated: Array<{ path: string; value: unknown }> = [];
  truncatedNumbers(filled, v, '', truncated);
  const errors = [
    ...truncated.map((t) => ({ path: t.path, message: 'Expected integer', value: t.value })),
    ...[...Value.Errors(schema, v)]
      .filter((e) => !truncated.some((t) => t.path === e.path))
      .map((e) => ({ ...e, message: issueMessage(e) })),
  ];
  if (errors.length) {
    const lines = errors.slice(0, 10).map((e) => {
      const p = e.path
        .replace(/^\//, '')
        .replace(/\/(\d+)(?=\/|$)/g, '[$1]')
        .replace(/\//g, '.');
      const full = [where, p].filter(Boolean).join('.').replace(/\.\[/g, '[');
      return `  ${full || '(root)'}: ${e.message}${e.value !== undefined && typeof e.value !== 'object' ? ` (got ${JSON.stringify(e.value)})` : ''}`;
    });
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  return v as T;
}

/**
 * `vendors:` written as a map (`openai: { api_key: … }`), the shape of many other tools'
 * files, would otherwise be coerced into a one-element list and reported as four confusing
 * errors about vendors[0]. Say what the list looks like, with the names that were given.
 */
function vendorsMustBeAList(vendors: unknown): void {
  if (!vendors || typeof vendors !== 'object' || Array.isArray(vendors)) return;
  const names = Object.keys(vendors);
  const lines = (names.length ? names : ['openai'])
    .slice(0, 5)
    .map((n) => `    - { id: ${n}, use: ${n}, config: { ... } }`);
  throw new ConfigError(
    `vendors: is a list of vendor instances, not a map. Write each as an item with its id, its adapter (use) and its config:\n  vendors:\n${lines.join('\n')}\n(see docs/configuration.md)`
  );
}

function setIfDefined(obj: Record<string, any>, path: string[], value: unknown) {
  if (value === undefined || value === '') return;
  let o = obj;
  for (const p of path.slice(0, -1)) o = o[p] = o[p] && typeof o[p] === 'object' ? o[p] : {};
  o[path[path.length - 1]] = value;
}

/** Read, substitute, override and validate the core config. Area and vendor sections are checked at boot. */
export function loadConfig(opts: LoadOptions = {}): CoreConfig {
  const env = opts.env ?? process.env;
  let raw: unknown = opts.object ?? {};
  const file = opts.file ?? env.SVC_CONFIG;
  if (file) {
    let text: string;
    try {
      text = readFileSync(resolve(file), 'utf8');
    } catch (e) {
      throw new ConfigError(`cannot read config file ${file}: ${(e as Error).message}`);
    }
    try {
      raw = parseYaml(text) ?? {};
    } catch (e) {
      throw new ConfigError(`config file ${file} is not valid YAML: ${(e as Error).message}`);
    }
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw))
    throw new ConfigError('the config must be a mapping at the top level');
  const doc = substituteEnv(raw, env) as Record<string, any>;
  vendorsMustBeAList(doc.vendors);

  setIfDefined(doc, ['server', 'port'], env.SVC_PORT);
  setIfDefined(doc, ['server', 'host'], env.SVC_HOST);
  setIfDefined(doc, ['server', 'public_url'], env.SVC_PUBLIC_URL);
  setIfDefined(doc, ['data_dir'], env.SVC_DATA_DIR);
  setIfDefined(doc, ['database', 'url'], env.SVC_DATABASE_URL);
  setIfDefined(doc, ['redis', 'url'], env.SVC_REDIS_URL);
  setIfDefined(doc, ['admin_key'], env.SVC_ADMIN_KEY);
  setIfDefined(doc, ['master_key'], env.SVC_MASTER_KEY);
  setIfDefined(doc, ['log', 'level'], env.SVC_LOG_LEVEL);
  setIfDefined(doc, ['log', 'requests'], logRequestsFromEnv(env.SVC_LOG_REQUESTS));
  setIfDefined(doc, ['server', 'port'], opts.overrides?.port);
  setIfDefined(doc, ['server', 'host'], opts.overrides?.host);
  setIfDefined(doc, ['data_dir'], opts.overrides?.data_dir);

  const cfg = validateSection<CoreConfig>(CoreConfigSchema, doc, '');
  cfg.data_dir = resolve(cfg.data_dir);
  if (!cfg.database.url) cfg.database.url = `sqlite:${resolve(cfg.data_dir, 'gateway.db')}`;
  if (!cfg.server.public_url)
    cfg.server.public_url = `http://${cfg.server.host.includes(':') ? `[${cfg.server.host}]` : cfg.server.host}:${cfg.server.port}`;
  cfg.server.public_url = cfg.server.public_url.replace(/\/+$/, '');
  if (!cfg.tiers[cfg.default_tier])
    throw new ConfigError(
      `default_tier: "${cfg.default_tier}" is not one of the tiers (${Object.keys(cfg.tiers).join(', ')})`
    );
  // `routes` targets are checked once the instances exist (core/router/registry.ts): an embedded
  // engine (`sharp`) is one without a `vendors:` entry.
  const ids = new Set<string>();
  cfg.vendors.forEach((v, i) => {
    if (ids.has(v.id)) throw new ConfigError(`vendors[${i}].id: "${v.id}" is used twice`);
    ids.add(v.id);
  });
  return cfg;
}

/** SVC_LOG_REQUESTS: `true`/`1`, `false`/`0` or `auto`; anything else reaches the schema, which names it. */
function logRequestsFromEnv(v: string | undefined): unknown {
  if (v === undefined || v === '') return undefined;
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  return v;
}
