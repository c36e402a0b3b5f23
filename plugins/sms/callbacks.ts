import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { apiError, classifyGeneric, Ok, type SmsStatusUpdate, type Svc } from '../../core/kit/area.js';
import type { SmsBox } from './records.js';

const VERIFY_MS = 10_000;

/**
 * POST /v1/sms/status/{instance}: a vendor's delivery report. The instance's adapter verifies
 * its signature and reads it (`sms.status`); a forged or unsigned one is 401 and changes
 * nothing. A report for a message this gateway does not know, or a move its state does not
 * allow (a late `sent` after `delivered`), is acknowledged and ignored, so the vendor stops retrying.
 */
export function registerStatusCallbacks(app: FastifyInstance, svc: Svc, box: SmsBox): void {
  app.register(async (scope) => {
    // Vendors post forms; the adapter reads the raw body, which its signature covers.
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) =>
      done(null, body)
    );
    scope.post(
      '/v1/sms/status/:instance',
      {
        config: { auth: 'none', operation: 'sms.status', errors: ['unauthenticated'] },
        schema: {
          summary: "A vendor's delivery report for a message (signed by the vendor)",
          tags: ['sms'],
          params: Type.Object({ instance: Type.String({ minLength: 1, maxLength: 100 }) }),
          response: { 200: Ok },
        },
      },
      async (req: FastifyRequest<{ Params: { instance: string } }>) => {
        const inst = svc.vendors.get(req.params.instance);
        const read = inst?.instance.capabilities['sms.status'];
        if (!read)
          throw apiError('not_found', `No vendor instance ${req.params.instance} takes SMS status callbacks here.`);
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
        let update: SmsStatusUpdate | null;
        try {
          update = (await read.invoke(
            {
              url: `${svc.config.server.public_url}${req.url}`,
              headers,
              body: typeof req.body === 'string' ? req.body : '',
            },
            { signal: AbortSignal.timeout(VERIFY_MS), deadline: Date.now() + VERIFY_MS }
          )) as SmsStatusUpdate | null;
        } catch (e) {
          if (classifyGeneric(e) === 'auth')
            throw apiError('unauthenticated', 'The status callback is not signed by the vendor.');
          throw e;
        }
        if (!update) return { ok: true };
        const rec = await box.findByVendorMessage(inst!.id, update.vendor_message_id);
        if (!rec) return { ok: true };
        const u = update;
        await svc.db
          .transaction()
          .execute((trx) =>
            box.move(trx, rec.id, u.state, u.error_code ? { data: { vendor_error_code: u.error_code } } : {})
          );
        return { ok: true };
      }
    );
  });
}
