import type { Kysely } from 'kysely';
import {
  iso,
  microsToUsd,
  type OutboxKind,
  type OutboxRecord,
  type SmsEncoding,
  type SmsSendInput,
  type SmsSendOutput,
  type SmsStatusUpdate,
  type Svc,
} from '../../core/kit/area.js';
import type { SmsRecordT } from './schemas.js';

/** What the SMS area keeps with each outbox record. */
export interface SmsData {
  to: string;
  from: string | null;
  segments: number;
  encoding: SmsEncoding;
  /** A passcode's message (POST /v1/sms/otp). */
  otp?: boolean;
  /** The vendor's error code from a status callback (undelivered, failed). */
  vendor_error_code?: string;
}

export type SmsBox = OutboxKind<SmsData, SmsSendInput>;

export const SMS_EVENTS = {
  'sms.sent': 'A text message was accepted by its vendor.',
  'sms.delivered': 'The carrier reported a text message delivered.',
  'sms.undelivered': 'The carrier reported a text message could not be delivered.',
  'sms.failed': 'A text message could not be sent, or its vendor reported it failed.',
  'sms.rejected': 'The vendor refused the number for good (not a valid mobile number, opted out): not sent.',
};

/** A vendor's status report, in the caller's transaction: the record moves if its state allows. */
export function applyStatus(trx: Kysely<any>, box: SmsBox, id: string, u: SmsStatusUpdate) {
  return box.move(trx, id, u.state, u.error_code ? { data: { vendor_error_code: u.error_code } } : {});
}

/** The embedded sink's adapter name: its records say `captured`. */
export const CAPTURE_ADAPTER = 'sms-capture';

export function registerSmsBox(svc: Svc): { box: SmsBox; wire: (r: OutboxRecord<SmsData>) => SmsRecordT } {
  const wire = (r: OutboxRecord<SmsData>): SmsRecordT => ({
    sms_id: r.id,
    to: r.data.to,
    from: r.data.from,
    state: r.state as SmsRecordT['state'],
    vendor: r.vendor,
    segments: r.data.segments,
    encoding: r.data.encoding,
    captured: !!r.vendor && svc.vendors.get(r.vendor)?.adapter === CAPTURE_ADAPTER && r.state !== 'queued',
    cost_usd: microsToUsd(r.costMicros),
    error: r.error,
    created_at: iso(r.createdAt),
    updated_at: iso(r.updatedAt),
  });
  svc.events.declare(SMS_EVENTS);
  const box = svc.outbox.register<SmsData, SmsSendInput, SmsSendOutput>({
    kind: 'sms',
    idPrefix: 'sms',
    capability: 'sms.send',
    states: { queued: 'queued', sent: 'sent', failed: 'failed', refused: 'rejected' },
    // Carriers report in any order; a final state stays final.
    moves: { sent: ['delivered', 'undelivered', 'failed'] },
    events: {
      sent: 'sms.sent',
      delivered: 'sms.delivered',
      undelivered: 'sms.undelivered',
      failed: 'sms.failed',
      rejected: 'sms.rejected',
    },
    find: 'sms.find',
    // A report Twilio posted before the send job kept the message's sid.
    applyEarly: async (trx, record, u, kind) => {
      await applyStatus(trx, kind, record.id, u as SmsStatusUpdate);
    },
    eventData: wire,
    vendorMessageId: (o) => o.vendor_message_id,
    onSent: (o) => ({ segments: o.segments }),
  });
  return { box, wire };
}
