import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  apiError,
  fieldError,
  idempotentTransaction,
  ListQuery,
  type CapturedSms,
  type ListQueryT,
  type Svc,
} from '../../core/kit/area.js';
import type { SmsConfigT } from './config.js';
import { e164 } from './phone.js';
import { CAPTURE_ADAPTER, type SmsBox, type SmsData } from './records.js';
import type { OutboxRecord } from '../../core/kit/area.js';
import {
  CapturedMessage,
  IdParams,
  ListFilter,
  SendBody,
  SmsList,
  SmsRecord,
  type SendBodyT,
  type SmsRecordT,
} from './schemas.js';
import { acceptSms } from './send.js';
import { Type } from '@sinclair/typebox';

type Wire = (r: OutboxRecord<SmsData>) => SmsRecordT;

/** POST /v1/sms/send, GET /v1/sms/{id}, GET /v1/sms, GET /v1/sms/{id}/captured. */
export function registerSmsRoutes(app: FastifyInstance, svc: Svc, cfg: SmsConfigT, box: SmsBox, wire: Wire): void {
  app.post(
    '/v1/sms/send',
    {
      config: { scope: 'sms:send', idempotent: true, operation: 'sms.send', capability: 'sms.send' },
      schema: {
        summary: 'Send a text message (answered queued; a job sends it)',
        tags: ['sms'],
        body: SendBody,
        response: { 200: SmsRecord },
      },
    },
    async (req: FastifyRequest<{ Body: SendBodyT }>, reply: FastifyReply) => {
      const b = req.body;
      const p = req.principal!;
      // Everything checked before anything is written, reserved or sent.
      if (b.template_id !== undefined)
        throw apiError('unprocessable', 'SMS templates are not available on this gateway yet: send a body instead.', {
          param: 'template_id',
        });
      if (b.body === undefined) throw fieldError('body', 'is required');
      const to = await e164(b.to);
      svc.router.assertServed('sms.send', { vendor: b.vendor, region: p.region });
      return idempotentTransaction(svc, req, reply, async (trx) =>
        wire(
          await acceptSms(svc, cfg, box, trx, {
            accountId: p.accountId,
            region: p.region,
            to,
            body: b.body!,
            from: b.from,
            vendor: b.vendor,
          })
        )
      );
    }
  );

  app.get(
    '/v1/sms/:id',
    {
      config: { scope: 'sms:read', operation: 'sms.get' },
      schema: {
        summary: 'A text message and its delivery state',
        tags: ['sms'],
        params: IdParams,
        response: { 200: SmsRecord },
      },
    },
    async (req: FastifyRequest<{ Params: { id: string } }>) =>
      wire(await box.get(req.principal!.accountId, req.params.id))
  );

  app.get(
    '/v1/sms',
    {
      config: { scope: 'sms:read', operation: 'sms.list' },
      schema: {
        summary: 'Your text messages, newest first',
        tags: ['sms'],
        querystring: Type.Composite([ListQuery, ListFilter], { additionalProperties: false }),
        response: { 200: SmsList },
      },
    },
    async (req: FastifyRequest<{ Querystring: ListQueryT & { state?: string } }>) => {
      const page = await box.list(req.principal!.accountId, req.query);
      return { items: page.items.map(wire), next_cursor: page.next_cursor };
    }
  );

  app.get(
    '/v1/sms/:id/captured',
    {
      config: { scope: 'sms:read', operation: 'sms.captured' },
      schema: {
        summary: 'The message as the sms-capture vendor kept it (a gateway without an SMS provider)',
        tags: ['sms'],
        params: IdParams,
        response: { 200: CapturedMessage },
      },
    },
    async (req: FastifyRequest<{ Params: { id: string } }>) => {
      const r = await box.get(req.principal!.accountId, req.params.id);
      const inst = r.vendor ? svc.vendors.get(r.vendor) : undefined;
      const read = inst?.adapter === CAPTURE_ADAPTER ? inst.instance.capabilities['sms.capture.read'] : undefined;
      const kept =
        read && r.state !== 'queued'
          ? ((await read.invoke(
              { idempotency_key: r.id },
              { signal: AbortSignal.timeout(10_000), deadline: Date.now() + 10_000 }
            )) as CapturedSms | null)
          : null;
      if (!kept)
        throw apiError(
          'not_found',
          `Message ${r.id} was not captured on this gateway (state ${r.state}, vendor ${r.vendor ?? 'none yet'}).`
        );
      return {
        sms_id: r.id,
        to: kept.to,
        from: kept.from,
        body: kept.body,
        segments: kept.segments,
        captured_at: kept.captured_at,
      };
    }
  );
}
