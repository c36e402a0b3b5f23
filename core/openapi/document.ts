import type { FastifyContextConfig } from 'fastify';
import { ERRORS, type ErrorCode } from '../errors.js';
import { routeErrorCodes } from '../discovery/route-errors.js';
import { authOf, openapiPath, type RouteRegistry } from '../discovery/route-registry.js';
import type { Svc } from '../context.js';
import { errorBodyJson } from './error-schema.js';

// How the route registry becomes OpenAPI 3.1: @fastify/swagger converts each route's TypeBox
// schemas, `transform` adds what the route's config says (operationId, tags, security, the
// errors it can answer with), and `transformObject` adds the shared parts (the error body,
// the security schemes, the tag list) and turns the errors into responses.

const ERRORS_EXT = 'x-svc-errors';
export const ERROR_REF = '#/components/schemas/Error';

export const SECURITY_SCHEMES = {
  bearerAuth: {
    type: 'http',
    scheme: 'bearer',
    description: 'The project key (`sk_live_…`) as `Authorization: Bearer <API_KEY>`. POST /v1/activate creates one.',
  },
  apiKeyHeader: {
    type: 'apiKey',
    in: 'header',
    name: 'x-api-key',
    description: 'The project key in the `x-api-key` header, for clients that cannot set Authorization.',
  },
  adminKey: {
    type: 'http',
    scheme: 'bearer',
    description: "The operator's admin key (config `admin_key`, env SVC_ADMIN_KEY), for /v1/admin/* only.",
  },
} as const;

/** The schemes the document lists: the admin key's only when the admin API is on (`admin_key` set). */
export function securitySchemes(adminOn: boolean): Partial<typeof SECURITY_SCHEMES> {
  const { adminKey, ...tenant } = SECURITY_SCHEMES;
  return adminOn ? { ...tenant, adminKey } : tenant;
}

const SYSTEM_TAG = { name: 'system', description: 'Version, discovery and this document; no key needed.' };

/** The tag a route belongs to when it names none: its operation's area (`account.keys.list` → account). */
function defaultTag(config: FastifyContextConfig, url: string): string {
  if (config.operation) return config.operation.split('.')[0];
  return url.split('/').filter(Boolean)[1] ?? 'system';
}

function securityOf(config: FastifyContextConfig, url: string): Array<Record<string, string[]>> {
  const auth = authOf(config, url);
  if (auth === 'key') return [{ bearerAuth: [] }, { apiKeyHeader: [] }];
  if (auth === 'admin') return [{ adminKey: [] }];
  return [];
}

export interface TransformInput {
  schema: any;
  url: string;
  route: { method: string | string[]; url: string; config?: FastifyContextConfig };
}

export function makeTransform(registry: RouteRegistry) {
  return ({ schema, url, route }: TransformInput) => {
    const s: Record<string, any> = { ...(schema ?? {}) };
    if (s.hide) return { schema: s, url };
    const config = route.config ?? {};
    const method = Array.isArray(route.method) ? route.method[0] : route.method;
    const entry = registry.find(method, openapiPath(route.url));
    if (config.operation) s.operationId = config.operation;
    if (!s.tags?.length) s.tags = [defaultTag(config, route.url)];
    s.security = securityOf(config, route.url);
    if (config.capability) s['x-svc-capability'] = config.capability;
    if (config.billing) s['x-svc-billing'] = config.billing;
    if (entry) s[ERRORS_EXT] = routeErrorCodes(entry);
    return { schema: s, url };
  };
}

function errorResponses(codes: ErrorCode[]): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const c of codes) byStatus.set(ERRORS[c].status, [...(byStatus.get(ERRORS[c].status) ?? []), c]);
  const out: Record<string, unknown> = {};
  for (const [status, list] of byStatus) {
    out[String(status)] = {
      description: list.map((c) => `\`${c}\`: ${ERRORS[c].meaning}`).join('\n\n'),
      content: { 'application/json': { schema: { $ref: ERROR_REF } } },
    };
  }
  return out;
}

export function makeTransformObject(svc: Pick<Svc, 'areas'>) {
  return ({ openapiObject }: { openapiObject: any }) => {
    const doc = openapiObject;
    doc.components = doc.components ?? {};
    doc.components.schemas = { ...(doc.components.schemas ?? {}), Error: errorBodyJson() };
    const used = new Set<string>();
    for (const ops of Object.values<Record<string, any>>(doc.paths ?? {})) {
      for (const op of Object.values<any>(ops)) {
        if (!op || typeof op !== 'object' || !op.responses) continue;
        for (const t of op.tags ?? []) used.add(t);
        const codes: ErrorCode[] = op[ERRORS_EXT] ?? [];
        delete op[ERRORS_EXT];
        for (const [status, resp] of Object.entries(errorResponses(codes))) {
          if (!op.responses[status]) op.responses[status] = resp;
        }
      }
    }
    const areaTags = svc.areas
      .map((a) => a.def.name)
      .filter((n) => used.has(n))
      .map((name) => ({ name }));
    const others = [...used]
      .filter((n) => n !== 'system' && !svc.areas.some((a) => a.def.name === n))
      .sort()
      .map((name) => ({ name }));
    doc.tags = [...(used.has('system') ? [SYSTEM_TAG] : []), ...areaTags, ...others];
    return doc;
  };
}
