import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { apiError, Ok, type ListQueryT } from '../../core/kit/area.js';
import type { ObservabilityConfigT } from './config.js';
import type { EventStore } from './events.js';
import {
  EventBody,
  EventList,
  EventListQuery,
  MAX_POINTS,
  MetricQuery,
  MetricSeries,
  MetricsBody,
  type EventBodyT,
  type MetricPointT,
  type MetricQueryT,
} from './metric-schemas.js';
import type { MetricStore } from './metrics.js';
import type { MetricQueries } from './metric-query.js';
import { prometheusText } from './prometheus.js';

/** POST /v1/observability/events and /metrics, and reading both back (a query, a Prometheus scrape). */
export function registerMetricRoutes(
  app: FastifyInstance,
  cfg: ObservabilityConfigT,
  events: EventStore,
  metrics: MetricStore,
  queries: MetricQueries
): void {
  app.post(
    '/v1/observability/events',
    {
      config: { scope: 'observability:write', operation: 'observability.events' },
      schema: { summary: 'Record a custom event', tags: ['observability'], body: EventBody, response: { 200: Ok } },
    },
    async (req: FastifyRequest<{ Body: EventBodyT }>) => {
      const props = req.body.properties;
      if (props && Buffer.byteLength(JSON.stringify(props)) > cfg.max_event_properties_bytes)
        throw apiError('payload_too_large', `properties is over ${cfg.max_event_properties_bytes} bytes as JSON.`, {
          param: 'properties',
        });
      await events.add(req.principal!.accountId, req.body);
      return { ok: true };
    }
  );

  app.get(
    '/v1/observability/events',
    {
      config: { scope: 'observability:read', operation: 'observability.events.list' },
      schema: {
        summary: 'Custom events, newest first',
        tags: ['observability'],
        querystring: EventListQuery,
        response: { 200: EventList },
      },
    },
    async (req: FastifyRequest<{ Querystring: ListQueryT & { event?: string } }>) =>
      events.list(req.principal!.accountId, req.query)
  );

  app.post(
    '/v1/observability/metrics',
    {
      config: { scope: 'observability:write', operation: 'observability.metrics' },
      schema: {
        summary: `Record one metric point or a list of up to ${MAX_POINTS}`,
        tags: ['observability'],
        body: MetricsBody,
        response: { 200: Ok },
      },
    },
    async (req: FastifyRequest<{ Body: MetricPointT | MetricPointT[] }>) => {
      const points = Array.isArray(req.body) ? req.body : [req.body];
      if (points.length > MAX_POINTS)
        throw apiError('payload_too_large', `${points.length} points: at most ${MAX_POINTS} a call.`);
      await metrics.add(req.principal!.accountId, points);
      return { ok: true };
    }
  );

  app.get(
    '/v1/observability/metrics',
    {
      config: { scope: 'observability:read', operation: 'observability.metrics.query' },
      schema: {
        summary: 'A metric aggregated per time bucket (sum, avg, min, max, p50, p95, count), a series per tag set',
        tags: ['observability'],
        querystring: MetricQuery,
        response: { 200: MetricSeries },
      },
    },
    async (req: FastifyRequest<{ Querystring: MetricQueryT }>) =>
      queries.query(req.principal!.accountId, req.query, req.meter.signal)
  );

  app.get(
    '/v1/observability/metrics/prometheus',
    {
      config: { scope: 'observability:read', operation: 'observability.metrics.prometheus' },
      schema: {
        summary: "The account's metrics in the Prometheus text format (each series' newest point)",
        tags: ['observability'],
        produces: ['text/plain'],
        response: { 200: Type.String({ description: 'text/plain; version=0.0.4' }) },
      },
    },
    async (req: FastifyRequest, reply: FastifyReply) => {
      const since = Date.now() - cfg.prometheus_window_seconds * 1000;
      const text = prometheusText(await metrics.latest(req.principal!.accountId, since));
      return reply.type('text/plain; version=0.0.4; charset=utf-8').send(text);
    }
  );
}
