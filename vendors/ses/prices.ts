import type { EmailSendInput } from '../../core/kit/vendor.js';

/**
 * Amazon SES's list prices (aws.amazon.com/ses/pricing): 0.10 USD per 1,000 emails, each
 * recipient counting as one, and 0.12 USD per GB of attachments sent (each recipient's copy).
 */
export const SES_USD_PER_EMAIL = 0.0001;
export const SES_USD_PER_ATTACHMENT_GB = 0.12;

/** Decoded size of a base64 string, without decoding it. */
const decoded = (b64: string) => Math.floor((b64.length * 3) / 4) - (b64.match(/=+$/)?.[0].length ?? 0);

/** One message, in micro-USD: per recipient, plus its attachments' bytes per recipient. */
export function sesPrice(input: EmailSendInput, usdPerEmail: number, usdPerAttachmentGb: number): number {
  const recipients = Math.max(1, input.to.length + input.cc.length + input.bcc.length);
  const bytes = input.attachments.reduce((n, a) => n + decoded(a.content), 0);
  return Math.ceil(recipients * (usdPerEmail * 1_000_000 + (bytes / 1e9) * usdPerAttachmentGb * 1_000_000));
}
