import type { CapabilitySpec, EmailSendInput, ListPrice } from '../../core/kit/area.js';

/** One plain message to one recipient: the unit discovery quotes email.send in. */
const ONE_MESSAGE: EmailSendInput = {
  message_id: '<list-price@example.com>',
  idempotency_key: 'list-price',
  from: { address: 'sender@example.com' },
  to: [{ address: 'recipient@example.com' }],
  cc: [],
  bcc: [],
  subject: 'list price',
  text: 'list price',
  attachments: [],
  headers: {},
};

/**
 * Discovery's price of email.send on an instance: what its own price() charges for one message
 * (an SMTP relay's configured fee, nothing on the capture vendor). A price() that cannot quote
 * the sample leaves the instance unpriced rather than failing discovery.
 */
export const emailListPrice: NonNullable<CapabilitySpec['listPrice']> = (inst): ListPrice | null => {
  try {
    const micros = inst.instance.capabilities['email.send']?.price?.(ONE_MESSAGE);
    return typeof micros === 'number' && Number.isFinite(micros) ? { unit: 'message', micros } : null;
  } catch {
    return null;
  }
};
