import { defineArea, BILLING_CAPABILITIES, JobRetry } from '../../core/kit/area.js';
import { awaitingVendor, Charges, LOOKUP_JOB } from './charges.js';
import { BillingConfig } from './config.js';
import { billingMigrations } from './migrations.js';
import { registerBillingPages } from './pages.js';
import { Refunds, RETRY_JOB } from './refunds.js';
import { registerBillingRoutes } from './routes.js';
import { registerBillingWebhooks } from './webhooks.js';

const BILLING_EVENTS = {
  'charge.pending': 'A charge was accepted and settles later (a bank debit, a delayed capture).',
  'charge.requires_action': 'A charge waits for the payer to authenticate at its next_action_url.',
  'charge.succeeded': 'A charge succeeded: the money was taken.',
  'charge.failed': 'A charge failed (declined, or authentication failed); data.error says why.',
  'charge.partially_refunded': 'Part of a charge was refunded (data.amount_refunded says how much).',
  'charge.refunded': 'A charge was refunded in full.',
  'refund.succeeded': 'A refund went through at the payments vendor.',
  'refund.failed': 'A refund failed at the payments vendor; its amount can be refunded again.',
};

/** Billing: charges and refunds of the caller's end customers at a payments vendor. */
export default defineArea({
  name: 'billing',
  configSchema: BillingConfig,
  capabilities: BILLING_CAPABILITIES,
  migrations: billingMigrations,
  register(app, ctx) {
    const svc = ctx.svc;
    svc.events.declare(BILLING_EVENTS);
    const charges = new Charges(svc, ctx.config);
    const refunds = new Refunds(svc, charges);
    // A charge left pending or awaiting the payer is looked up at its vendor until it settles.
    svc.jobs.register<{ charge_id: string }>(
      LOOKUP_JOB,
      async (job) => {
        const c = await charges.find(svc.db, job.payload.charge_id);
        if (!c || !awaitingVendor(c.state)) return;
        const now = await charges.refresh(c);
        if (awaitingVendor(now.state))
          throw new JobRetry(`charge still ${now.state}`, { delayMs: charges.lookupDelayMs(job.attempt) });
      },
      { backoff: (n) => charges.lookupDelayMs(n) }
    );
    // A refund whose outcome was not heard is asked again under its own idempotency key.
    svc.jobs.register<{ refund_id: string }>(
      RETRY_JOB,
      async (job) => {
        if (!(await refunds.retry(job.payload.refund_id)))
          throw new JobRetry('refund still pending', { delayMs: charges.lookupDelayMs(job.attempt) });
      },
      { backoff: (n) => charges.lookupDelayMs(n) }
    );
    registerBillingRoutes(app, charges, refunds);
    registerBillingPages(app, charges);
    registerBillingWebhooks(app, charges, refunds);
  },
});
