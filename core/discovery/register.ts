import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Svc } from '../context.js';
import { apiError } from '../errors.js';
import { noVendor } from '../router/no-vendor.js';
import type { RouteEntry, RouteRegistry } from './route-registry.js';
import { routeErrors } from './route-errors.js';
import { buildExample } from './example.js';
import { billingOf } from './billing.js';
import {
  DiscoveryDetail,
  DiscoveryIdParams,
  DiscoveryList,
  type DiscoveryDetailT,
  type DiscoveryItemT,
} from './schemas.js';

/** TypeBox schemas carry symbol keys; the wire gets plain JSON Schema. */
function plain(schema: unknown): unknown {
  return schema === undefined ? undefined : JSON.parse(JSON.stringify(schema));
}

function successSchema(route: RouteEntry): unknown {
  const response = (route.schema.response ?? {}) as Record<string, unknown>;
  const key = Object.keys(response)
    .sort()
    .find((k) => /^2(\d\d|xx)$/.test(k));
  return key ? plain(response[key]) : null;
}

/** Why a capability has no vendor to call right now, in the words its 503 would use. */
function unavailableReason(svc: Svc, capability: string): string {
  const ready = svc.vendors.serving(capability).filter((v) => !v.byokOnly);
  if (!ready.length) return noVendor({ capability, ...svc.router.plannerOptions(capability) }).message;
  return `Every vendor configured for ${capability} (${ready.map((v) => v.id).join(', ')}) is cooling down after failures; calls try them again when the cooldown ends.`;
}

export function describe(svc: Svc, route: RouteEntry): DiscoveryItemT {
  const cap = route.config.capability;
  const serving = cap ? svc.vendors.serving(cap) : [];
  const available = cap ? svc.router.available(cap) : true;
  return {
    id: route.operation!,
    method: route.method,
    path: route.path,
    ...(route.schema.summary ? { summary: route.schema.summary } : {}),
    capability: cap ?? null,
    available,
    ...(available || !cap ? {} : { reason: unavailableReason(svc, cap) }),
    regions: [...new Set(serving.flatMap((v) => v.regions))],
    vendors: serving.map((v) => v.id),
    billing: billingOf(svc, route),
  };
}

export function detail(svc: Svc, route: RouteEntry): DiscoveryDetailT {
  const { schema, config } = route;
  const request: DiscoveryDetailT['request'] = {};
  if (schema.body) request.body = plain(schema.body);
  if (schema.querystring) request.querystring = plain(schema.querystring);
  if (schema.params) request.params = plain(schema.params);
  const ex = buildExample(route, svc.config.server.public_url);
  return {
    ...describe(svc, route),
    ...(schema.description ? { description: schema.description } : {}),
    auth: route.auth,
    scope: route.auth === 'key' ? (config.scope ?? null) : null,
    idempotent: !!config.idempotent,
    request,
    response: successSchema(route),
    errors: routeErrors(route),
    example: { curl: ex.curl, body: ex.body },
  };
}

/**
 * GET /v1/discovery and GET /v1/discovery/{id}: what this gateway serves right now, from the
 * same route registry as the OpenAPI document. `available` is computed on every call from
 * the router's view of vendor health, so a vendor in cooldown shows at once.
 */
export async function registerDiscovery(app: FastifyInstance, registry: RouteRegistry): Promise<void> {
  app.get(
    '/v1/discovery',
    {
      config: { auth: 'none', operation: 'system.discovery' },
      schema: {
        summary: 'Every operation this gateway serves, whether a vendor is available for it, and its price',
        tags: ['system'],
        response: { 200: DiscoveryList },
      },
    },
    async () => ({ items: registry.operations().map((r) => describe(app.svc, r)) })
  );

  app.get(
    '/v1/discovery/:id',
    {
      config: { auth: 'none', operation: 'system.discovery.get', errors: ['not_found'] },
      schema: {
        summary: 'One operation: its request schema, the errors it can answer with, and a runnable curl example',
        tags: ['system'],
        params: DiscoveryIdParams,
        response: { 200: DiscoveryDetail },
      },
    },
    async (req: FastifyRequest<{ Params: { id: string } }>) => {
      const route = registry.operation(req.params.id);
      if (!route)
        throw apiError('not_found', `No operation "${req.params.id}" on this gateway. GET /v1/discovery lists them.`, {
          param: 'id',
        });
      return detail(app.svc, route);
    }
  );
}
