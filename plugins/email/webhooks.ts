import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { Type } from '@sinclair/typebox';
import { Ok, readVendorCallback, type EmailEventUpdate, type OutboxRecord, type Svc } from '../../core/kit/area.js';
import { normalAddress } from './address.js';
import type { EmailBox, EmailData } from './service.js';
import type { SuppressionStore } from './suppressions.js';

/**
 * POST /v1/email/webhooks/{instance}: a vendor's delivery, bounce and complaint events. The
 * instance's adapter verifies the signature over the raw body and reads it (`email.events`); a
 * forged or unsigned one is 401 and changes nothing. Each event moves its record (when its state
 * allows: a late `delivered` after `bounced` is ignored) and, for a permanent bounce or a
 * complaint, puts the recipients it names on the account's suppression list, all in one
 * transaction with the state's event. Events for messages this gateway does not know are
 * acknowledged, so the vendor stops retrying.
 */
export function registerEmailWebhooks(
  app: FastifyInstance,
  svc: Svc,
  box: EmailBox,
  suppressions: SuppressionStore
): void {
  app.register(async (scope) => {
    // Signatures cover the exact bytes: every body is kept as a string for the adapter.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));
    scope.post(
      '/v1/email/webhooks/:instance',
      {
        config: { auth: 'none', operation: 'email.webhook', errors: ['unauthenticated'] },
        schema: {
          summary: "A vendor's delivery, bounce or complaint events (signed by the vendor)",
          tags: ['email'],
          params: Type.Object({ instance: Type.String({ minLength: 1, maxLength: 100 }) }),
          response: { 200: Ok },
        },
      },
      async (req: FastifyRequest<{ Params: { instance: string } }>) => {
        const { instance, output: updates } = await readVendorCallback<EmailEventUpdate[]>(
          svc,
          req,
          'email.events',
          'email webhooks'
        );
        for (const u of updates) await apply(svc, box, suppressions, instance, u);
        return { ok: true };
      }
    );
  });
}

async function apply(svc: Svc, box: EmailBox, suppressions: SuppressionStore, vendor: string, u: EmailEventUpdate) {
  const rec = await box.findByVendorMessage(vendor, u.vendor_message_id);
  // Not stored yet (the send job has not committed the vendor's id): the outbox keeps it a while.
  if (!rec) await box.early(vendor, u.vendor_message_id, u);
  else await svc.db.transaction().execute((trx) => applyEmailEvent(trx, box, suppressions, rec, u));
}

/**
 * One event in the caller's transaction: the record moves (when its state allows) and, for a
 * permanent bounce or a complaint, the recipients it names go on the account's suppression list.
 */
export async function applyEmailEvent(
  trx: Kysely<any>,
  box: EmailBox,
  suppressions: SuppressionStore,
  rec: OutboxRecord<EmailData>,
  u: EmailEventUpdate
): Promise<void> {
  // A transient bounce (mailbox full, greylisted) is only the vendor retrying: nothing moves.
  if (u.state === 'bounced' && u.permanent === false) return;
  const sentTo = new Set([...rec.data.to, ...rec.data.cc, ...rec.data.bcc].map(safeNormal));
  // Only the message's own recipients are suppressed, whatever else an event names.
  const named = u.recipients.map(safeNormal).filter((a): a is string => !!a && sentTo.has(a));
  const patch = u.detail ? { data: { event_detail: u.detail.slice(0, 500) } } : {};
  await box.move(trx, rec.id, u.state, patch);
  if (u.state === 'delivered') return;
  const reason = u.state === 'bounced' ? 'bounce' : 'complaint';
  for (const a of named) await suppressions.add(rec.accountId, a, reason, trx);
}

function safeNormal(a: string): string | undefined {
  try {
    return normalAddress(a);
  } catch {
    return undefined;
  }
}
