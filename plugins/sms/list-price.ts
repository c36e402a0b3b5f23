import type { CapabilitySpec, ListPrice, SmsSendInput } from '../../core/kit/area.js';

/** One GSM-7 segment to one number: the unit discovery quotes sms.send in (vendors bill per segment). */
const ONE_SEGMENT: SmsSendInput = { to: '+14155550100', body: 'list price', idempotency_key: 'list-price' };

/**
 * Discovery's price of sms.send on an instance: what its own price() charges for one segment
 * (Twilio's `segment_price_usd`, nothing on the capture sink). A price() that cannot quote the
 * sample leaves the instance unpriced rather than failing discovery.
 */
export const smsListPrice: NonNullable<CapabilitySpec['listPrice']> = (inst): ListPrice | null => {
  try {
    const micros = inst.instance.capabilities['sms.send']?.price?.(ONE_SEGMENT);
    return typeof micros === 'number' && Number.isFinite(micros) ? { unit: 'segment', micros } : null;
  } catch {
    return null;
  }
};
