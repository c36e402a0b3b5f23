import type { Kysely } from 'kysely';
import { newId, smsSegments, type OutboxRecord, type Svc } from '../../core/kit/area.js';
import type { SmsConfigT } from './config.js';
import type { SmsBox, SmsData } from './records.js';

export interface SmsToSend {
  accountId: string;
  region?: string;
  /** Already E.164 (plugins/sms/phone.ts). */
  to: string;
  body: string;
  from?: string;
  vendor?: string;
  otp?: boolean;
}

/**
 * The one send path of the area (POST /v1/sms/send and the passcodes of POST /v1/sms/otp):
 * the message accepted into the outbox in the caller's transaction, its cost reserved, its
 * send job enqueued; the job sends it through the router. Segments are counted here as
 * carriers count them, then replaced by the vendor's own count once it accepted.
 */
export async function acceptSms(
  svc: Svc,
  cfg: SmsConfigT,
  box: SmsBox,
  trx: Kysely<any>,
  m: SmsToSend
): Promise<OutboxRecord<SmsData>> {
  const { segments, encoding } = smsSegments(m.body);
  const from = m.from ?? cfg.default_from;
  const id = newId('sms');
  const { record } = await box.accept(trx, {
    id,
    accountId: m.accountId,
    region: m.region,
    vendor: m.vendor,
    input: {
      to: m.to,
      body: m.body,
      ...(from ? { from } : {}),
      idempotency_key: id,
      ...(cfg.status_callbacks ? { status_callback_url: `${svc.config.server.public_url}/v1/sms/status` } : {}),
    },
    data: { to: m.to, from: from ?? null, segments, encoding, ...(m.otp ? { otp: true } : {}) },
  });
  return record;
}
