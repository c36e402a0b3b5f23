import type { CapabilitySpec, ListPrice } from '../../core/kit/area.js';

const SAMPLE = { token: 'list-price' };

/**
 * Discovery's price of captcha.verify on an instance: what its price() charges for one
 * verification (nothing on Turnstile); an instance that charges nothing is unpriced.
 */
export const captchaListPrice: NonNullable<CapabilitySpec['listPrice']> = (inst): ListPrice | null => {
  try {
    const micros = inst.instance.capabilities['captcha.verify']?.price?.(SAMPLE);
    return typeof micros === 'number' && Number.isFinite(micros) && micros > 0
      ? { unit: 'verification', micros }
      : null;
  } catch {
    return null;
  }
};
