import {
  defineArea,
  EMAIL_CAPABILITIES,
  WorkerPool,
  type EmailSendInput,
  type EmailEventUpdate,
  type EmailSendOutput,
  type OutboxRecord,
} from '../../core/kit/area.js';
import { checkAddress } from './address.js';
import { EmailConfig } from './config.js';
import { emailListPrice } from './list-price.js';
import { DomainStore } from './domains.js';
import { emailMigrations } from './migrations.js';
import { registerEmailRoutes } from './routes.js';
import { EmailService, type EmailData } from './service.js';
import { registerEmailSetupRoutes } from './setup-routes.js';
import { applyEmailEvent, registerEmailWebhooks } from './webhooks.js';
import { SuppressionStore } from './suppressions.js';
import type { tasks as templateTasks } from './template-tasks.js';
import { EmailTemplates } from './templates.js';

const EMAIL_EVENTS = {
  'email.sent': 'A vendor accepted an email (the capture vendor: it kept it on this machine).',
  'email.delivered': "The recipient's server took an email.",
  'email.bounced': 'An email bounced; its address is now on the suppression list.',
  'email.complained': 'A recipient marked an email as spam; the address is now on the suppression list.',
  'email.failed': 'An email could not be sent.',
};

/** Email: send through the outbox, domains with DKIM, suppression, templates; SMTP or the capture vendor. */
export default defineArea({
  name: 'email',
  configSchema: EmailConfig,
  capabilities: EMAIL_CAPABILITIES,
  migrations: emailMigrations,
  register(app, ctx) {
    const svc = ctx.svc;
    const cfg = ctx.config;
    svc.capabilities.set('email.send', { ...EMAIL_CAPABILITIES['email.send'], listPrice: emailListPrice });
    try {
      checkAddress(cfg.default_from, 'default_from');
    } catch {
      throw new Error(`plugins.email.default_from: "${cfg.default_from}" is not an email address`);
    }
    // Filling templates and turning HTML into text: two threads, one an account, 20 of an account waiting.
    const pool = new WorkerPool<typeof templateTasks>({
      name: 'email-templates',
      caller: import.meta.url,
      module: 'plugins/email/template-tasks',
      concurrency: 2,
      perAccount: 1,
      maxQueuedPerAccount: 20,
      maxMemoryMb: 256,
    });
    app.addHook('onClose', () => pool.close());
    const templates = new EmailTemplates(
      svc.db,
      { maxBytes: cfg.max_template_bytes, renderMs: Math.round(cfg.template_render_seconds * 1000) },
      pool
    );
    const domains = new DomainStore(svc.db, svc.masterKey, cfg);
    const suppressions = new SuppressionStore(svc.db);
    svc.events.declare(EMAIL_EVENTS);
    let email: EmailService | undefined;
    const box = svc.outbox.register<EmailData, EmailSendInput, EmailSendOutput>({
      kind: 'email',
      idPrefix: 'em',
      capability: 'email.send',
      states: { queued: 'queued', sent: 'sent', failed: 'failed' },
      moves: {
        sent: ['delivered', 'bounced', 'complained'],
        delivered: ['bounced', 'complained'],
      },
      events: {
        sent: 'email.sent',
        delivered: 'email.delivered',
        bounced: 'email.bounced',
        complained: 'email.complained',
        failed: 'email.failed',
      },
      eventData: (r: OutboxRecord<EmailData>) => email!.wire(r),
      vendorMessageId: (out) => out.vendor_message_id,
      maxAttempts: cfg.max_send_attempts,
      find: 'email.find',
      applyEarly: (trx, rec, u, kind) => applyEmailEvent(trx, kind, suppressions, rec, u as EmailEventUpdate),
    });
    email = new EmailService(svc, cfg, box, domains, suppressions, templates);
    registerEmailRoutes(app, email, svc.config.limits.large_body_bytes);
    registerEmailSetupRoutes(app, domains, suppressions, templates);
    registerEmailWebhooks(app, svc, box, suppressions);
  },
});
