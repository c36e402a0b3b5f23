import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { idempotentTransaction, type Svc } from '../../core/kit/area.js';
import type { SmsConfigT } from './config.js';
import type { OtpStore } from './otp.js';
import { e164 } from './phone.js';
import type { SmsBox } from './records.js';
import { OtpBody, OtpResult, VerifyBody, VerifyResult } from './schemas.js';
import { acceptSms } from './send.js';

/** POST /v1/sms/otp and POST /v1/sms/verify: passcodes sent through the area's one send path. */
export function registerOtpRoutes(app: FastifyInstance, svc: Svc, cfg: SmsConfigT, box: SmsBox, otp: OtpStore): void {
  app.post(
    '/v1/sms/otp',
    {
      config: {
        scope: 'sms:send',
        idempotent: true,
        operation: 'sms.otp',
        capability: 'sms.send',
        errors: ['rate_limited'],
      },
      schema: {
        summary: 'Send a 6-digit one-time passcode to a number',
        tags: ['sms'],
        body: OtpBody,
        response: { 200: OtpResult },
      },
    },
    async (req: FastifyRequest<{ Body: { to: string } }>, reply: FastifyReply) => {
      const p = req.principal!;
      const to = await e164(req.body.to);
      svc.router.assertServed('sms.send', { region: p.region });
      // The passcode, its limits and its message commit together: refused, nothing is sent.
      return idempotentTransaction(svc, req, reply, async (trx) => {
        const issued = await otp.issue(trx, p.accountId, to);
        const body = cfg.otp_message.replaceAll('{code}', issued.code);
        const sms = await acceptSms(svc, cfg, box, trx, {
          accountId: p.accountId,
          region: p.region,
          to,
          body,
          otp: true,
        });
        return { request_id: issued.request_id, expires_at: issued.expires_at, sms_id: sms.id };
      });
    }
  );

  app.post(
    '/v1/sms/verify',
    {
      config: { scope: 'sms:send', operation: 'sms.verify', errors: ['otp_attempts_exceeded'] },
      schema: {
        summary: 'Check a passcode sent with POST /v1/sms/otp (a right code works once)',
        tags: ['sms'],
        body: VerifyBody,
        response: { 200: VerifyResult },
      },
    },
    async (req: FastifyRequest<{ Body: { to: string; code: string } }>) => {
      const to = await e164(req.body.to);
      return { valid: await otp.verify(req.principal!.accountId, to, req.body.code) };
    }
  );
}
