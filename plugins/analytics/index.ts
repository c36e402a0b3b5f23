import { defineArea } from '../../core/kit/area.js';
import { Analysis } from './analysis.js';
import { AnalyticsConfig } from './config.js';
import { analyticsMigrations } from './migrations.js';
import { registerPosthogCapture } from './posthog.js';
import { registerAnalyticsRoutes } from './routes.js';

/** Analytics: events and people stored in the gateway's database; funnels and cohorts in SQL, off the event loop. */
export default defineArea({
  name: 'analytics',
  configSchema: AnalyticsConfig,
  migrations: analyticsMigrations,
  register(app, ctx) {
    const svc = ctx.svc;
    const cfg = ctx.config;
    const analysis = new Analysis(svc, cfg);
    app.addHook('onClose', () => analysis.close());
    svc.retention.add({
      name: 'analytics_events',
      days: cfg.retention_days,
      sweep: async (before, limit) => {
        const old = svc.db
          .selectFrom('analytics_events')
          .select(['account_id', 'uuid'])
          .where('ts', '<', before)
          .limit(limit);
        const r = await svc.db
          .deleteFrom('analytics_events')
          .where((eb) => eb(eb.refTuple('account_id', 'uuid'), 'in', old))
          .executeTakeFirst();
        return Number(r.numDeletedRows);
      },
    });
    registerAnalyticsRoutes(app, svc, cfg, analysis);
    registerPosthogCapture(app, svc, cfg);
  },
});
