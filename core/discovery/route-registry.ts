import type { FastifyContextConfig, FastifyInstance, FastifySchema, RouteOptions } from 'fastify';
import type { AuthMode } from '../context.js';

/** One documented operation, as the route declared it: the source of OpenAPI and discovery. */
export interface RouteEntry {
  method: string;
  /** Fastify's URL (`/v1/account/keys/:key_id`). */
  url: string;
  /** The OpenAPI form of the URL (`/v1/account/keys/{key_id}`). */
  path: string;
  /** Discovery id from `config.operation`; routes without one are not operations. */
  operation?: string;
  auth: AuthMode;
  config: FastifyContextConfig;
  schema: FastifySchema & { hide?: boolean; summary?: string; description?: string; tags?: string[] };
}

/** `:name` (with an optional regex) becomes `{name}`, as @fastify/swagger writes paths. */
export function openapiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)(\([^)]*\))?/g, '{$1}');
}

/** The default the auth hook applies: a project key under /v1, nothing elsewhere. */
export function authOf(config: FastifyContextConfig | undefined, url: string): AuthMode {
  return config?.auth ?? (url.startsWith('/v1/') ? 'key' : 'none');
}

/**
 * Every visible route the app registers, collected by an onRoute hook that must be added
 * before the routes (so before the system routes and the areas). Hidden routes (schema.hide),
 * the HEAD twins Fastify adds for GET, and the docs UI's own routes stay out.
 */
export class RouteRegistry {
  private readonly list: RouteEntry[] = [];
  private readonly byId = new Map<string, RouteEntry>();

  add(route: Pick<RouteOptions, 'method' | 'url' | 'schema' | 'config'>): void {
    let schema = (route.schema ?? {}) as RouteEntry['schema'];
    if (schema.hide) return;
    // A body with a schema per media type (JSON and a multipart upload): discovery, its examples
    // and the SDK describe the JSON one, the spec's wire; OpenAPI lists every form from the route.
    const json = (schema.body as { content?: Record<string, { schema: unknown }> } | undefined)?.content?.[
      'application/json'
    ];
    if (json) schema = { ...schema, body: json.schema };
    const config = (route.config ?? {}) as FastifyContextConfig;
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).filter((m) => m !== 'HEAD');
    for (const method of methods) {
      const entry: RouteEntry = {
        method,
        url: route.url,
        path: openapiPath(route.url),
        operation: config.operation,
        auth: authOf(config, route.url),
        config,
        schema,
      };
      if (entry.operation) {
        const seen = this.byId.get(entry.operation);
        // Two routes with one id would make discovery and operationIds ambiguous: fail at boot.
        if (seen)
          throw new Error(
            `Operation id "${entry.operation}" is declared by ${seen.method} ${seen.url} and ${method} ${route.url}; operation ids must be unique.`
          );
        this.byId.set(entry.operation, entry);
      }
      this.list.push(entry);
    }
  }

  all(): readonly RouteEntry[] {
    return this.list;
  }

  /** Routes that declare an operation id, in registration order. */
  operations(): RouteEntry[] {
    return this.list.filter((r) => r.operation);
  }

  operation(id: string): RouteEntry | undefined {
    return this.byId.get(id);
  }

  find(method: string, path: string): RouteEntry | undefined {
    return this.list.find((r) => r.method === method.toUpperCase() && r.path === path);
  }
}

/**
 * Start collecting the app's routes; call before any route is registered (and before
 * @fastify/swagger, which reads the same `hide`). With no admin key the admin API answers 404
 * on every path (core/http/auth-hook.ts), so its routes, an area's own included, are hidden.
 */
export function collectRoutes(app: FastifyInstance, adminOn: boolean): RouteRegistry {
  const registry = new RouteRegistry();
  app.addHook('onRoute', (route) => {
    if (!adminOn && authOf(route.config, route.url) === 'admin') route.schema = { ...route.schema, hide: true };
    registry.add(route);
  });
  return registry;
}
