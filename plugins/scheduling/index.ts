import { defineArea } from '../../core/define.js';
import { SchedulingConfig } from './config.js';
import { schedulingMigrations } from './migrations.js';
import { WebhookSecrets } from './secrets.js';
import { KIND, type Deps } from './common.js';
import { registerWebhooks, webhookHandler } from './webhooks.js';
import { registerCron } from './cron.js';
import { cronRunHandler, cronTickHandler } from './cron-jobs.js';
import { pushHandler, registerQueue } from './queue.js';

/** Scheduling: cron jobs that POST to URLs, a delayed message queue, signed outbound webhooks; all on core/jobs. */
export default defineArea({
  name: 'scheduling',
  configSchema: SchedulingConfig,
  migrations: schedulingMigrations,
  register(app, ctx) {
    const d: Deps = { svc: ctx.svc, cfg: ctx.config, secrets: new WebhookSecrets(ctx.svc.db), log: ctx.log, userAgent: `svc-gateway/${ctx.svc.version}` };
    const jobs = ctx.svc.jobs;
    jobs.register(KIND.webhook, webhookHandler(d), { concurrency: ctx.config.concurrency });
    jobs.register(KIND.cronTick, cronTickHandler(d), { concurrency: 8 });
    jobs.register(KIND.cronRun, cronRunHandler(d), { concurrency: ctx.config.concurrency });
    jobs.register(KIND.push, pushHandler(d), { concurrency: ctx.config.concurrency });
    registerWebhooks(app, d);
    registerCron(app, d);
    registerQueue(app, d);
  },
});
