import type { EmailEventUpdate } from '../../core/kit/vendor.js';

// What SES publishes to SNS about a message it accepted
// (https://docs.aws.amazon.com/ses/latest/dg/notification-contents.html, and the event
// publishing records of a configuration set, which name the type `eventType`): the message's
// `mail.messageId` is the id SendEmail answered.

interface Recipient {
  emailAddress?: string;
  diagnosticCode?: string;
}

interface SesNotification {
  notificationType?: string;
  eventType?: string;
  mail?: { messageId?: string };
  bounce?: { bounceType?: string; bounceSubType?: string; bouncedRecipients?: Recipient[] };
  complaint?: { complainedRecipients?: Recipient[]; complaintFeedbackType?: string };
  delivery?: { recipients?: string[]; smtpResponse?: string };
}

const addresses = (list: Recipient[] | undefined) =>
  (list ?? []).map((r) => r.emailAddress).filter((a): a is string => typeof a === 'string');

const withDetail = (detail: string | undefined) => (detail ? { detail } : {});

/** One SNS Notification's Message as the contract's update, or null for one that moves nothing. */
export function sesUpdate(message: string): EmailEventUpdate | null {
  let n: SesNotification;
  try {
    n = JSON.parse(message);
  } catch {
    return null;
  }
  const id = n?.mail?.messageId;
  if (typeof id !== 'string' || !id) return null;
  switch (n.notificationType ?? n.eventType) {
    case 'Bounce': {
      const b = n.bounce ?? {};
      const first = b.bouncedRecipients?.find((r) => r.diagnosticCode)?.diagnosticCode;
      return {
        vendor_message_id: id,
        state: 'bounced',
        recipients: addresses(b.bouncedRecipients),
        // Transient (a full mailbox) and Undetermined are SES still trying, or unsure: nothing suppressed.
        permanent: b.bounceType === 'Permanent',
        ...withDetail(first ?? [b.bounceType, b.bounceSubType].filter(Boolean).join('/')),
      };
    }
    case 'Complaint':
      return {
        vendor_message_id: id,
        state: 'complained',
        recipients: addresses(n.complaint?.complainedRecipients),
        ...withDetail(n.complaint?.complaintFeedbackType),
      };
    case 'Delivery':
      return {
        vendor_message_id: id,
        state: 'delivered',
        recipients: (n.delivery?.recipients ?? []).filter((a) => typeof a === 'string'),
        ...withDetail(n.delivery?.smtpResponse),
      };
    default:
      // Send, Reject, DeliveryDelay, Open, Click, Rendering Failure, Subscription: no state of the record's.
      return null;
  }
}
