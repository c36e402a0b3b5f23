import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { Ok, readVendorCallback, type SmsStatusUpdate, type Svc } from '../../core/kit/area.js';
import { applyStatus, type SmsBox } from './records.js';

/**
 * POST /v1/sms/status/{instance}: a vendor's delivery report. The instance's adapter verifies
 * its signature and reads it (`sms.status`); a forged or unsigned one is 401 and changes
 * nothing. A report for a message id no record has yet is kept by the outbox for the send job
 * that is storing it; a move the state does not allow (a late `sent` after `delivered`) is
 * acknowledged and ignored, so the vendor stops retrying.
 * GET on the same path takes the reports a vendor sends as a query string (Vonage's default):
 * the adapter reads them from the URL it is handed.
 */
export function registerStatusCallbacks(app: FastifyInstance, svc: Svc, box: SmsBox): void {
  app.register(async (scope) => {
    // Vendors post forms or JSON; the adapter reads the raw body, which its signature covers.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));
    const handler = async (req: FastifyRequest<{ Params: { instance: string } }>) => {
      const { instance, output: update } = await readVendorCallback<SmsStatusUpdate | null>(
        svc,
        req,
        'sms.status',
        'SMS status callbacks'
      );
      if (!update) return { ok: true };
      const rec = await box.findByVendorMessage(instance, update.vendor_message_id);
      // Not ours yet, or not yet stored (the send job has not committed the sid): the outbox keeps it a while.
      if (!rec) await box.early(instance, update.vendor_message_id, update);
      else await svc.db.transaction().execute((trx) => applyStatus(trx, box, rec.id, update));
      return { ok: true };
    };
    const params = Type.Object({ instance: Type.String({ minLength: 1, maxLength: 100 }) });
    const options = (operation: string, summary: string) => ({
      config: { auth: 'none' as const, operation, errors: ['unauthenticated' as const] },
      schema: { summary, tags: ['sms'], params, response: { 200: Ok } },
    });
    scope.post(
      '/v1/sms/status/:instance',
      options('sms.status', "A vendor's delivery report for a message (signed by the vendor)"),
      handler
    );
    scope.get(
      '/v1/sms/status/:instance',
      options('sms.status.get', "A vendor's delivery report sent as a query string (signed by the vendor)"),
      handler
    );
  });
}
