import { capabilities, capability } from './capability.js';

// The SMS contracts. `sms.send` hands one message to a vendor. `sms.status` reads a vendor's
// status callback: signature schemes are the vendor's own (Twilio's HMAC over URL and form,
// Vonage's signed JWT…), so the adapter verifies and parses it and the area only applies the
// state it returns. `sms.capture.read` gives back a message the capture sink kept.

/** Every state an SmsRecord takes; `rejected` = not sent (bad number, opted out). */
export const SMS_STATES = ['queued', 'sent', 'delivered', 'undelivered', 'failed', 'rejected'] as const;
export type SmsState = (typeof SMS_STATES)[number];

/** States no callback moves a record out of. */
export const SMS_FINAL_STATES: readonly SmsState[] = ['delivered', 'undelivered', 'failed', 'rejected'];

export interface SmsSendInput {
  /** E.164, validated by the area. */
  to: string;
  body: string;
  /** Sender id or number; the instance's default when absent. */
  from?: string;
  /**
   * The gateway's id of the message (`sms_…`), stable across retries of the same send: a vendor
   * with idempotency keys passes it on, the capture sink keys its file by it.
   */
  idempotency_key: string;
  /**
   * Where the vendor should post status changes, when the gateway has a public URL for them:
   * the base, to which the adapter appends `/{its instance id}` (the area routes a callback to
   * the instance that can verify it; which instance sends is known only at send time).
   */
  status_callback_url?: string;
}

export interface SmsSendOutput {
  /** The vendor's id of the message (Twilio's `SM…` sid), what its callbacks name. */
  vendor_message_id: string;
  /** Segments as the vendor counted them (it bills those), else as `smsSegments` counts. */
  segments: number;
}

/** A status callback as it reached the gateway, for the adapter to verify and read. */
export interface SmsCallbackInput {
  /** The full public URL the vendor posted to (what a signature covers). */
  url: string;
  /** Request headers, names in lower case. */
  headers: Record<string, string>;
  /** The raw request body. */
  body: string;
}

export interface SmsStatusUpdate {
  vendor_message_id: string;
  state: SmsState;
  /** The vendor's error code for a failed or undelivered message. */
  error_code?: string;
}

/** A send whose outcome a crash lost, for the vendor to look up (`sms.find`). */
export interface SmsFindInput {
  /** The send as it was handed to `sms.send`. */
  send: SmsSendInput;
  /** When the attempt started (epoch ms): a message the vendor took for it was created after. */
  since: number;
}

export interface SmsCaptureReadInput {
  /** The gateway's id of the message, what the capture sink keyed it by. */
  idempotency_key: string;
}

export interface CapturedSms {
  id: string;
  to: string;
  from: string | null;
  body: string;
  segments: number;
  captured_at: string;
}

export const SMS_CAPABILITIES = capabilities({
  // Not idempotent: once a vendor may have sent it, no second vendor is tried.
  'sms.send': capability<SmsSendInput, SmsSendOutput>({
    idempotent: false,
    description: 'Send one text message.',
  }),
  // Idempotent and free: reading a callback has no effect at the vendor.
  'sms.status': capability<SmsCallbackInput, SmsStatusUpdate | null>({
    idempotent: true,
    description: "Verify and read a vendor's status callback (null: a callback with nothing to apply).",
  }),
  // Idempotent and free: a lookup of what the vendor already took.
  'sms.find': capability<SmsFindInput, SmsSendOutput | null>({
    idempotent: true,
    description: 'Find the message a vendor already accepted for a send (null: none), as the send answered it.',
  }),
  'sms.capture.read': capability<SmsCaptureReadInput, CapturedSms | null>({
    idempotent: true,
    description: 'Read a message the capture sink kept.',
  }),
});
