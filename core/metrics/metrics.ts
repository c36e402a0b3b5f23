import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

// Prometheus metrics at GET /metrics, text exposition, no key. It tells anyone who can reach
// it the request mix and which vendors are failing, so operators keep it off the public
// interface (scrape it on a private address, or block /metrics at the reverse proxy).

/** What the app exposes to the rest of the core, to register its own metrics on. */
export interface AppMetrics {
  /** This app's registry (each app has its own: tests build many apps in one process). */
  registry: Registry;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  httpDuration: Histogram<'method' | 'route' | 'status'>;
  /** Requests whose client hung up before the answer (they have no status to count them under). */
  clientDisconnects: Counter<'method' | 'route'>;
}

declare module 'fastify' {
  interface FastifyInstance {
    metrics: AppMetrics;
  }
}

// Default process metrics describe the process, not an app, and collecting them installs
// process-wide observers (event-loop delay, GC); so one registry per process, merged into
// each app's output at scrape time.
let processRegistry: Registry | undefined;
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/** Route label: the route's template, never the raw URL, so ids do not explode the series. */
function routeLabel(url: string | undefined): string {
  return url ?? 'unmatched';
}

export function registerMetrics(app: FastifyInstance): AppMetrics {
  const registry = new Registry();
  const httpRequests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route template and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from the request arriving to the response being sent, by method, route template and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });

  const clientDisconnects = new Counter({
    name: 'client_disconnects_total',
    help: 'Requests whose client closed the connection before the response, by method and route template.',
    labelNames: ['method', 'route'] as const,
    registers: [registry],
  });

  const router = () => app.svc.router;
  new Gauge({
    name: 'svc_vendor_cooldown_seconds',
    help: 'Seconds until a vendor instance that failed is tried first again (0 when it is healthy).',
    labelNames: ['vendor'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const now = Date.now();
      const cooling = router().cooldowns.snapshot();
      for (const v of app.svc.vendors.all())
        this.set({ vendor: v.id }, Math.max(0, ((cooling[v.id]?.until ?? now) - now) / 1000));
    },
  });
  new Gauge({
    name: 'svc_vendor_failure_streak',
    help: 'Failures in a row of a vendor instance; a success resets it.',
    labelNames: ['vendor'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const cooling = router().cooldowns.snapshot();
      for (const v of app.svc.vendors.all()) this.set({ vendor: v.id }, cooling[v.id]?.streak ?? 0);
    },
  });
  new Gauge({
    name: 'svc_capability_available',
    help: '1 when a healthy vendor serves the capability right now, else 0 (what GET /v1/discovery reports).',
    labelNames: ['capability'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const cap of app.svc.capabilities.keys()) this.set({ capability: cap }, router().available(cap) ? 1 : 0);
    },
  });

  const metrics: AppMetrics = { registry, httpRequests, httpDuration, clientDisconnects };
  app.decorate('metrics', metrics);

  // prom-client hashes the label set on every inc/observe; the series of a route and status
  // are looked up once and kept. Matched routes get their own hook, which knows its template;
  // the global hook counts only what matched no route.
  type Series = { count: ReturnType<typeof httpRequests.labels>; time: ReturnType<typeof httpDuration.labels> };
  const seriesOf = (method: string, route: string) => {
    const byStatus = new Map<number, Series>();
    return (status: number): Series => {
      let s = byStatus.get(status);
      if (!s) {
        const labels = { method, route, status: String(status) };
        byStatus.set(status, (s = { count: httpRequests.labels(labels), time: httpDuration.labels(labels) }));
      }
      return s;
    };
  };
  const observe = (series: (status: number) => Series, reply: FastifyReply) => {
    const s = series(reply.statusCode);
    s.count.inc();
    s.time.observe(reply.elapsedTime / 1000);
  };
  app.addHook('onRoute', (route) => {
    const byMethod = new Map<string, (status: number) => Series>();
    const hook = (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
      let series = byMethod.get(req.method);
      if (!series) byMethod.set(req.method, (series = seriesOf(req.method, routeLabel(route.url))));
      observe(series, reply);
      done();
    };
    const existing =
      route.onResponse === undefined ? [] : Array.isArray(route.onResponse) ? route.onResponse : [route.onResponse];
    route.onResponse = [...existing, hook as any];
  });
  const unmatched = new Map<string, (status: number) => Series>();
  app.addHook('onResponse', (req, reply, done) => {
    if (req.is404) {
      let series = unmatched.get(req.method);
      if (!series) unmatched.set(req.method, (series = seriesOf(req.method, routeLabel(undefined))));
      observe(series, reply);
    }
    done();
  });

  app.get('/metrics', { config: { auth: 'none' }, schema: { hide: true } as any }, async (_req, reply) => {
    const merged = Registry.merge([processMetrics(), registry]);
    return reply.type(merged.contentType).send(await merged.metrics());
  });
  return metrics;
}
