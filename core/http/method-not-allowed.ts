import FindMyWay, { type HTTPMethod } from 'find-my-way';
import type { FastifyInstance } from 'fastify';

/**
 * Remembers every route's path by method (with Fastify's own router library), so a request
 * whose path exists under another method is answered 405 with an `allow` header rather than
 * 404. Must be installed before the routes are added.
 */
export function trackRouteMethods(app: FastifyInstance): (url: string) => string[] {
  const router = FindMyWay({ ignoreTrailingSlash: true, maxParamLength: 500 });
  const noop = () => undefined;
  const methods = new Set<string>();
  app.addHook('onRoute', (route) => {
    for (const m of Array.isArray(route.method) ? route.method : [route.method]) {
      if (!router.hasRoute(m as HTTPMethod, route.url)) router.on(m as HTTPMethod, route.url, noop);
      methods.add(m);
    }
  });
  return (url: string) => {
    const path = url.split('?')[0];
    return [...methods].filter((m) => router.find(m as HTTPMethod, path) !== null).sort();
  };
}
