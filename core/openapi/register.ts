import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { RouteRegistry } from '../discovery/route-registry.js';
import { makeTransform, makeTransformObject, securitySchemes } from './document.js';

/**
 * The OpenAPI 3.1 document at GET /v1/openapi.json and a docs UI at /docs, both generated
 * from the route schemas. Must run before any documented route is registered: @fastify/swagger
 * collects routes with an onRoute hook. The UI's assets are served from the installed
 * swagger-ui package (no CDN), so the docs work offline and on a laptop.
 */
export async function registerOpenApi(app: FastifyInstance, registry: RouteRegistry): Promise<void> {
  const svc = app.svc;
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'svc-gateway',
        version: svc.version,
        description:
          'One HTTP API for developer infrastructure. Errors share one body (components.schemas.Error); '
          + 'GET /v1/discovery says which operations this gateway can serve right now.',
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      servers: [{ url: svc.config.server.public_url }],
      // Here rather than in transformObject: the route conversion reads them.
      components: { securitySchemes: securitySchemes(!!svc.config.admin_key) as any },
    },
    // public_url may carry a path prefix (a reverse proxy); route paths are the gateway's own.
    stripBasePath: false,
    transform: makeTransform(registry) as any,
    transformObject: makeTransformObject(svc) as any,
  });

  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { deepLinking: true, persistAuthorization: false },
    theme: { title: 'svc-gateway API' },
  });

  app.get(
    '/v1/openapi.json',
    {
      config: { auth: 'none', operation: 'system.openapi' },
      schema: { summary: 'This OpenAPI 3.1 document', tags: ['system'] },
    },
    async (_req, reply) => reply.type('application/json; charset=utf-8').send(app.swagger())
  );
}
