import { defineArea } from '../../core/kit/area.js';
import { ObservabilityConfig } from './config.js';
import { registerErrorRoutes } from './error-routes.js';
import { IssueStore } from './issues.js';
import { observabilityMigrations } from './migrations.js';
import { PublicKeys } from './public-keys.js';
import { registerSentryRoutes } from './sentry-routes.js';

/** Observability: errors grouped into issues, from the JSON API and Sentry SDKs. */
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
    registerErrorRoutes(app, cfg, issues);
    registerSentryRoutes(app, svc, cfg, new PublicKeys(svc.db), issues);
  },
});
