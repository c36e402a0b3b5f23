import { defineArea } from '../../core/kit/area.js';
import { SchedulingConfig } from './config.js';
import { schedulingMigrations } from './migrations.js';
import { WebhookSecrets } from './secrets.js';
import { DeliverySecrets } from './delivery-secrets.js';
import { KIND, type Deps } from './common.js';
import { registerWebhooks, webhookHandler } from './webhooks.js';
import { EndpointSecrets } from './event-endpoints.js';
import { eventSink, registerEvents } from './events.js';
import { registerCron } from './cron.js';
import { cronRunHandler, cronTickHandler } from './cron-jobs.js';
import { pushHandler, registerQueue } from './queue.js';
import { registerSchedulingRetention } from './retention.js';

/** Scheduling: cron jobs that POST to URLs, a delayed message queue, signed outbound webhooks; all on core/jobs. */
export default defineArea({
  name: 'scheduling',
  configSchema: SchedulingConfig,
  migrations: schedulingMigrations,
  register(app, ctx) {
    const d: Deps = {
      svc: ctx.svc,
      cfg: ctx.config,
      secrets: new WebhookSecrets(ctx.svc.db, ctx.svc.masterKey),
      deliveries: new DeliverySecrets(ctx.svc.masterKey),
      endpoints: new EndpointSecrets(ctx.svc.masterKey),
      log: ctx.log,
      userAgent: `svc-gateway/${ctx.svc.version}`,
    };
    const jobs = ctx.svc.jobs;
    const db = ctx.svc.db;
    // A job whose last attempt died with its node: its record must not stay pending forever.
    jobs.register(KIND.webhook, webhookHandler(d), {
      concurrency: ctx.config.concurrency,
      onExhausted: async (id) => {
        await db
          .updateTable('webhook_deliveries')
          .set({ state: 'failed', next_attempt_at: null, updated_at: Date.now() })
          .where('delivery_id', '=', id)
          .execute();
      },
    });
    jobs.register(KIND.cronTick, cronTickHandler(d), { concurrency: 8 });
    jobs.register(KIND.cronRun, cronRunHandler(d), {
      concurrency: ctx.config.concurrency,
      onExhausted: async (id) => {
        await db
          .updateTable('cron_runs')
          .set({ state: 'failed', updated_at: Date.now() })
          .where('run_id', '=', id)
          .execute();
      },
    });
    jobs.register(KIND.push, pushHandler(d), {
      concurrency: ctx.config.concurrency,
      onExhausted: async (_id, p: { message_id: string }, error) => {
        await db
          .updateTable('queue_messages')
          .set({ state: 'dead', dead_reason: `push failed: ${error}`.slice(0, 500), updated_at: Date.now() })
          .where('message_id', '=', p.message_id)
          .execute();
      },
    });
    // The gateway's events go out as this area's webhook deliveries (docs/events.md).
    ctx.svc.events.deliverWith(eventSink(d));
    registerEvents(app, d);
    registerWebhooks(app, d);
    registerCron(app, d);
    registerQueue(app, d);
    registerSchedulingRetention(ctx.svc);
  },
  // Before the jobs engine starts (it starts after every area's start): no delivery runs from a plaintext row.
  async start(ctx) {
    const rows = await new DeliverySecrets(ctx.svc.masterKey).sealPlaintextRows(ctx.svc.db, ctx.svc.dialect);
    if (rows) ctx.log.info({ rows }, 'sealed the delivery secrets and headers stored in plaintext');
  },
});
