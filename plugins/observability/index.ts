import { defineArea } from '../../core/kit/area.js';
import { ObservabilityConfig } from './config.js';
import { registerErrorRoutes } from './error-routes.js';
import { IssueStore } from './issues.js';
import { observabilityMigrations } from './migrations.js';
import { PublicKeys } from './public-keys.js';
import { registerSentryRoutes } from './sentry-routes.js';
import { EventStore } from './events.js';
import { MetricStore } from './metrics.js';
import { MetricQueries } from './metric-query.js';
import { registerMetricRoutes } from './metric-routes.js';
import { FlagStore } from './flags/flag-store.js';
import { registerFlagRoutes } from './flags/flag-routes.js';
import { registerOfrepRoutes } from './flags/ofrep-routes.js';
import { flagService } from './flags/flag-service.js';
import { browserAccess } from './flags/public-access.js';

/** Observability: errors grouped into issues, from the JSON API and Sentry SDKs; events; metrics; feature flags (also over OFREP). */
export default defineArea({
  name: 'observability',
  configSchema: ObservabilityConfig,
  migrations: observabilityMigrations,
  register(app, ctx) {
    const svc = ctx.svc;
    const cfg = ctx.config;
    const issues = new IssueStore(svc.db, cfg.grouping_frames);
    svc.retention.add({
      name: 'observability_errors',
      days: cfg.error_retention_days,
      sweep: (before, limit) => issues.sweep(before, limit),
    });
    const events = new EventStore(svc.db);
    const metrics = new MetricStore(svc.db);
    const metricQueries = new MetricQueries(svc.db, svc, {
      maxBuckets: cfg.max_query_buckets,
      maxPercentilePoints: cfg.max_percentile_points,
      threads: cfg.metric_query_threads,
      timeoutMs: cfg.metric_query_timeout_seconds * 1000,
    });
    app.addHook('onClose', () => metricQueries.close());
    svc.retention.add({
      name: 'observability_events',
      days: cfg.event_retention_days,
      sweep: (before, limit) => events.sweep(before, limit),
    });
    svc.retention.add({
      name: 'observability_metrics',
      days: cfg.metric_retention_days,
      sweep: (before, limit) => metrics.sweep(before, limit),
    });
    const flags = new FlagStore(svc.db, svc.bus, cfg.max_flags);
    app.addHook('onReady', () => flags.start());
    app.addHook('onClose', () => flags.stop());
    svc.retention.add({
      name: 'observability_flag_audit',
      days: cfg.flag_audit_retention_days,
      sweep: (before, limit) => flags.sweepAudit(before, limit),
    });
    registerErrorRoutes(app, cfg, issues);
    svc.services.provide('flags', flagService(flags));
    const publicKeys = new PublicKeys(svc.db);
    const browser = browserAccess(app, publicKeys);
    registerFlagRoutes(app, flags, browser);
    registerOfrepRoutes(app, flags, browser);
    registerMetricRoutes(app, cfg, events, metrics, metricQueries);
    registerSentryRoutes(app, svc, cfg, publicKeys, issues);
  },
});
