import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Ok, type Svc } from '../../core/kit/area.js';
import type { Analysis } from './analysis.js';
import type { AnalyticsConfigT } from './config.js';
import { eventRows, getPerson, identify, storeEvents } from './events.js';
import { chargedQuery } from './pricing.js';
import { cohort, funnel } from './reports.js';
import {
  CohortBody,
  CohortResult,
  FunnelBody,
  FunnelResult,
  IdentifyBody,
  Person,
  PersonParams,
  TrackBody,
  TrackResult,
  type CohortBodyT,
  type FunnelBodyT,
  type IdentifyBodyT,
  type TrackBodyT,
} from './schemas.js';
import { takeCapture } from './capture-limit.js';

/** POST /v1/analytics/track, identify, funnel and cohort; GET /v1/analytics/people/{distinct_id}. */
export function registerAnalyticsRoutes(app: FastifyInstance, svc: Svc, cfg: AnalyticsConfigT, analysis: Analysis) {
  app.post(
    '/v1/analytics/track',
    {
      config: { scope: 'analytics:write', operation: 'analytics.track', errors: ['payload_too_large', 'rate_limited'] },
      schema: {
        summary: 'Record one event or a list of them (duplicates by uuid are stored once)',
        tags: ['analytics'],
        body: TrackBody,
        response: { 200: TrackResult },
      },
    },
    async (req: FastifyRequest<{ Body: TrackBodyT }>) => {
      const list = Array.isArray(req.body) ? req.body : [req.body];
      const param = (i: number) => (Array.isArray(req.body) ? (i < 0 ? 'body' : `[${i}]`) : 'body');
      const accountId = req.principal!.accountId;
      await takeCapture(svc, cfg, accountId, req.principal!.tier);
      const rows = eventRows(accountId, list, cfg, param);
      const r = await storeEvents(svc, cfg, accountId, rows, req.id);
      req.meter.metered = true;
      req.meter.costMicros += r.micros;
      return { ok: true, accepted: r.accepted, duplicates: r.duplicates };
    }
  );

  app.post(
    '/v1/analytics/identify',
    {
      config: { scope: 'analytics:write', operation: 'analytics.identify' },
      schema: {
        summary: 'Merge an anonymous id into a user (one person in funnels and cohorts) and set traits',
        tags: ['analytics'],
        body: IdentifyBody,
        response: { 200: Ok },
      },
    },
    async (req: FastifyRequest<{ Body: IdentifyBodyT }>) => {
      const b = req.body;
      await identify(svc.db, req.principal!.accountId, b.distinct_id, b.user_id, b.traits);
      return { ok: true };
    }
  );

  app.get(
    '/v1/analytics/people/:distinct_id',
    {
      config: { scope: 'analytics:read', operation: 'analytics.person', errors: ['not_found'] },
      schema: {
        summary: 'A person by any of their distinct ids: the ids merged into them and their traits',
        tags: ['analytics'],
        params: PersonParams,
        response: { 200: Person },
      },
    },
    async (req: FastifyRequest<{ Params: { distinct_id: string } }>) =>
      getPerson(svc.db, req.principal!.accountId, req.params.distinct_id)
  );

  app.post(
    '/v1/analytics/funnel',
    {
      config: { scope: 'analytics:read', operation: 'analytics.funnel', errors: ['unprocessable', 'rate_limited'] },
      schema: {
        summary: 'People who did the steps in order within the window, per step',
        tags: ['analytics'],
        body: FunnelBody,
        response: { 200: FunnelResult },
      },
    },
    async (req: FastifyRequest<{ Body: FunnelBodyT }>) => {
      const accountId = req.principal!.accountId;
      return chargedQuery(svc, cfg, req, () => funnel(analysis, svc.dialect, accountId, req.body, req.meter.signal));
    }
  );

  app.post(
    '/v1/analytics/cohort',
    {
      config: { scope: 'analytics:read', operation: 'analytics.cohort', errors: ['unprocessable', 'rate_limited'] },
      schema: {
        summary:
          'Retention: how many of the people who did an event in the first period did it again in each later one',
        tags: ['analytics'],
        body: CohortBody,
        response: { 200: CohortResult },
      },
    },
    async (req: FastifyRequest<{ Body: CohortBodyT }>) => {
      const accountId = req.principal!.accountId;
      return chargedQuery(svc, cfg, req, () => cohort(analysis, svc.dialect, accountId, req.body, req.meter.signal));
    }
  );
}
