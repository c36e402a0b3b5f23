import { capabilities, capability } from './capability.js';

// The email contracts: a fully formed message the area hands a vendor to send, and the raw copy
// a capture vendor kept of one. The area validates and builds every field (addresses, headers,
// the Message-ID); a vendor only renders and transmits, so every vendor sends the same message.

export interface EmailAddress {
  /** The address, its domain in Unicode or punycode (the vendor encodes it as its wire needs). */
  address: string;
  name?: string;
}

export interface EmailAttachment {
  filename: string;
  /** Base64, checked by the area. */
  content: string;
  content_type: string;
}

/** The key that signs a message: the sending domain's, kept sealed by the area and opened per message. */
export interface EmailDkim {
  domain: string;
  selector: string;
  /** PEM (PKCS#8 or PKCS#1) RSA private key. */
  private_key: string;
}

export interface EmailSendInput {
  /** `<…@domain>`: the Message-ID header, and what a vendor that keeps messages keys them by. */
  message_id: string;
  /** The same for every attempt of one message: a vendor that honours idempotency keys sends it once. */
  idempotency_key: string;
  from: EmailAddress;
  to: EmailAddress[];
  cc: EmailAddress[];
  bcc: EmailAddress[];
  reply_to?: EmailAddress;
  subject: string;
  text?: string;
  html?: string;
  attachments: EmailAttachment[];
  /** Extra headers, names and values already checked free of CR/LF. */
  headers: Record<string, string>;
  dkim?: EmailDkim;
}

export interface EmailSendOutput {
  /** The vendor's id of the accepted message (the SMTP server's queue id, or the Message-ID). */
  vendor_message_id: string;
  /** Recipients the vendor accepted and refused (SMTP RCPT TO answers). */
  accepted: string[];
  rejected: string[];
}

/** A send whose outcome a crash lost, for the vendor to look up (`email.find`). */
export interface EmailFindInput {
  /** The send as it was handed to `email.send`. */
  send: EmailSendInput;
  /** When the attempt started (epoch ms): a message the vendor took for it was accepted after. */
  since: number;
}

export interface EmailRawInput {
  message_id: string;
}

export interface EmailRawOutput {
  /** The RFC 5322 message as it would have gone out, or null when this vendor kept none. */
  raw: string | null;
}

/** A vendor's event webhook as it reached the gateway, for the adapter to verify and read. */
export interface EmailWebhookInput {
  /** The full public URL the vendor posted to (what some signatures cover). */
  url: string;
  /** Request headers, names in lower case. */
  headers: Record<string, string>;
  /** The raw request body, exactly as received (signatures cover the bytes). */
  body: string;
}

/** What a vendor's event says happened to one message after it accepted it. */
export interface EmailEventUpdate {
  /** The id the vendor answered the send with (`EmailSendOutput.vendor_message_id`). */
  vendor_message_id: string;
  state: 'delivered' | 'bounced' | 'complained';
  /** The recipients the event concerns (a bounce names the address that bounced). */
  recipients: string[];
  /**
   * A permanent bounce (the address does not exist): its recipients join the suppression list.
   * A transient one (mailbox full) moves nothing. Complaints always suppress.
   */
  permanent?: boolean;
  /** The vendor's reason, for the record (`550 5.1.1 user unknown`). */
  detail?: string;
}

export const EMAIL_CAPABILITIES = capabilities({
  // Not idempotent: after a vendor may have accepted a message no other vendor is tried.
  'email.send': capability<EmailSendInput, EmailSendOutput>({
    idempotent: false,
    description: 'Send one fully formed email message.',
  }),
  // Idempotent and free: reading a webhook has no effect at the vendor. Throws VendorFailure
  // 'auth' for a body the vendor did not sign (the area answers 401 and changes nothing).
  'email.events': capability<EmailWebhookInput, EmailEventUpdate[]>({
    idempotent: true,
    description: "Verify and read a vendor's event webhook (delivered, bounced, complained).",
  }),
  // Idempotent and free: a lookup of what the vendor already took.
  'email.find': capability<EmailFindInput, EmailSendOutput | null>({
    idempotent: true,
    description: 'Find the message a vendor already accepted for a send (null: none), as the send answered it.',
  }),
  'email.raw': capability<EmailRawInput, EmailRawOutput>({
    idempotent: true,
    description: 'Read the RFC 5322 copy of a message a capture vendor kept.',
  }),
});

/**
 * An address as HTTP mail APIs take it in their JSON (`"Ann Lee" <ann@example.org>`): the name
 * quoted, so a comma or a dot in it never splits or breaks the address.
 */
export function addressHeader(a: EmailAddress): string {
  if (!a.name) return a.address;
  return `"${a.name.replace(/[\\"]/g, (c) => `\\${c}`)}" <${a.address}>`;
}

/** Every address a message goes to (to, cc, bcc), what per-recipient prices count. */
export function recipientsOf(input: Pick<EmailSendInput, 'to' | 'cc' | 'bcc'>): string[] {
  return [...input.to, ...input.cc, ...input.bcc].map((a) => a.address);
}

/** A message at a vendor that bills each recipient as one email (Resend, Postmark), in micro-USD. */
export function perRecipientMicros(input: Pick<EmailSendInput, 'to' | 'cc' | 'bcc'>, usdPerRecipient: number): number {
  return Math.ceil(recipientsOf(input).length * usdPerRecipient * 1_000_000);
}

/** Whether a header name or value could start a new header or line (CR, LF, NUL). */
export function hasLineBreak(s: string): boolean {
  return /[\r\n\0]/.test(s);
}

/**
 * The message as nodemailer's `sendMail` / MailComposer take it, built from the contract alone so
 * every vendor renders the same bytes; nodemailer is the vendors' dependency, not this file's.
 */
export function mailOptions(input: EmailSendInput) {
  const addr = (a: EmailAddress) => ({ name: a.name ?? '', address: a.address });
  return {
    messageId: input.message_id,
    from: addr(input.from),
    to: input.to.map(addr),
    cc: input.cc.map(addr),
    bcc: input.bcc.map(addr),
    ...(input.reply_to ? { replyTo: addr(input.reply_to) } : {}),
    subject: input.subject,
    ...(input.text !== undefined ? { text: input.text } : {}),
    ...(input.html !== undefined ? { html: input.html } : {}),
    attachments: input.attachments.map((a) => ({
      filename: a.filename,
      content: a.content,
      encoding: 'base64',
      contentType: a.content_type,
    })),
    headers: input.headers,
    // The Bcc header is never written into the message; the envelope carries those recipients.
    ...(input.dkim
      ? {
          dkim: {
            domainName: input.dkim.domain,
            keySelector: input.dkim.selector,
            privateKey: input.dkim.private_key,
          },
        }
      : {}),
  };
}
