import type { RouteEntry } from './route-registry.js';

// A runnable curl command for an operation, built from its schemas: every required field
// gets a value that the schema accepts (its example, default, const or first enum value,
// else one made from its type and constraints). Optional fields are left out, so the
// example shows the least a caller must send.

type Schema = Record<string, any>;

const FORMATS: Record<string, string> = {
  'date-time': '2026-01-01T00:00:00.000Z',
  date: '2026-01-01',
  time: '00:00:00Z',
  email: 'user@example.com',
  uri: 'https://example.com/',
  url: 'https://example.com/',
  hostname: 'example.com',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
  uuid: '00000000-0000-4000-8000-000000000000',
};

function matches(pattern: string, v: string): boolean {
  try {
    return new RegExp(pattern, 'u').test(v);
  } catch {
    return true; // a pattern JavaScript cannot compile says nothing useful here
  }
}

function exampleString(s: Schema, name: string): string {
  if (s.format && FORMATS[s.format]) return FORMATS[s.format];
  // Prefixed ids (`^key_[0-9A-Za-z]+$`) and names ending in _id get a well-formed made-up id.
  const prefix = typeof s.pattern === 'string' ? /^\^([a-z]+_)/.exec(s.pattern)?.[1] : undefined;
  let v = prefix ? `${prefix}example` : /_id$/.test(name) ? `${name.slice(0, -3)}_example` : name || 'example';
  if (typeof s.pattern === 'string' && !matches(s.pattern, v)) v = 'example';
  const min = s.minLength ?? 0;
  if (v.length < min) v = v.padEnd(min, 'x');
  if (s.maxLength !== undefined && v.length > s.maxLength) v = v.slice(0, s.maxLength);
  return v;
}

function exampleNumber(s: Schema, integer: boolean): number {
  let v = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + (integer ? 1 : 0.5) : 1);
  if (s.maximum !== undefined && v > s.maximum) v = s.maximum;
  return integer ? Math.ceil(v) : v;
}

/** A value the schema accepts; `name` is the field it is for (helps make a plausible string). */
export function exampleOf(schema: Schema | undefined, name = ''): unknown {
  if (!schema || typeof schema !== 'object') return null;
  if (schema.examples?.length) return schema.examples[0];
  if (schema.example !== undefined) return schema.example;
  if (schema.const !== undefined) return schema.const;
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  const branches = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(branches)) {
    // A structured branch over a scalar one: `messages: string | ChatMessage[]` is shown as
    // the list, since the string is a shorthand and `{"messages":"messages"}` teaches nothing.
    const structured = branches.find((b: Schema) => b.type === 'array' || b.type === 'object' || b.properties);
    const pick = structured ?? branches.find((b: Schema) => b.type !== 'null') ?? branches[0];
    return exampleOf(pick, name);
  }
  if (Array.isArray(schema.allOf)) {
    const parts = schema.allOf.map((p: Schema) => exampleOf(p, name));
    return parts.every((p: unknown) => p && typeof p === 'object' && !Array.isArray(p))
      ? Object.assign({}, ...parts)
      : parts[0];
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'string':
      return exampleString(schema, name);
    case 'integer':
      return exampleNumber(schema, true);
    case 'number':
      return exampleNumber(schema, false);
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array': {
      const n = Math.max(1, schema.minItems ?? 0);
      const count = schema.maxItems !== undefined ? Math.min(n, schema.maxItems) : n;
      const item = exampleOf(schema.items, name.replace(/s$/, ''));
      return Array.from({ length: count }, (_, i) =>
        typeof item === 'string' && schema.uniqueItems && i ? `${item}${i}` : item
      );
    }
    default: {
      if (!schema.properties) return {};
      const out: Record<string, unknown> = {};
      for (const key of schema.required ?? []) out[key] = exampleOf(schema.properties[key], key);
      // A body that must say something (a PATCH): add optional fields, in order, up to the minimum.
      for (const key of Object.keys(schema.properties)) {
        if (Object.keys(out).length >= (schema.minProperties ?? 0)) break;
        if (key !== 'idempotency_key' && !(key in out)) out[key] = exampleOf(schema.properties[key], key);
      }
      return out;
    }
  }
}

/** Shell single-quoting: safe for any value. */
function sq(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export interface Example {
  curl: string;
  body: unknown;
  path: string;
  query: Record<string, unknown>;
}

export function buildExample(route: RouteEntry, baseUrl: string): Example {
  const { schema } = route;
  const params = (exampleOf(schema.params as Schema) ?? {}) as Record<string, unknown>;
  let path = route.path.replace(/\{([^}]+)\}/g, (_, p: string) =>
    encodeURIComponent(String(params[p] ?? exampleString({}, p)))
  );
  path = path.replace(/\*$/, 'example');
  const query = schema.querystring ? (exampleOf(schema.querystring as Schema) as Record<string, unknown>) : {};
  // A list travels as the key repeated (`?tag=a&tag=b`), as the query-string validator coerces it.
  const qs = new URLSearchParams(
    Object.entries(query).flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((x) => [k, String(x)]))
  ).toString();
  const url = `${baseUrl.replace(/\/$/, '')}${path}${qs ? `?${qs}` : ''}`;
  // Fastify wants a body whenever the route has a body schema, even with no required field.
  const body = schema.body ? (exampleOf(schema.body as Schema) ?? {}) : null;

  const lines = [`curl -sS -X ${route.method} ${sq(url)}`];
  if (route.auth === 'key') lines.push(`-H "Authorization: Bearer $SVC_API_KEY"`);
  if (route.auth === 'admin') lines.push(`-H "Authorization: Bearer $SVC_ADMIN_KEY"`);
  if (body !== null) lines.push(`-H 'content-type: application/json'`, `-d ${sq(JSON.stringify(body))}`);
  return { curl: lines.join(' \\\n  '), body, path, query };
}
