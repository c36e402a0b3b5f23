import { randomBytes } from 'node:crypto';

// The Stripe fake's wire pieces: form bodies, Stripe's test payment methods, object ids.

export type Obj = Record<string, any>;

/** `a[b][0][c]=v` form fields into nested objects (arrays stay objects keyed "0", "1"…, as read). */
export function parseForm(body: string): Obj {
  const out: Obj = {};
  for (const [k, v] of new URLSearchParams(body)) {
    const path = k.replace(/\]/g, '').split('[');
    let at = out;
    for (const p of path.slice(0, -1)) at = at[p] ??= {};
    at[path[path.length - 1]] = v;
  }
  return out;
}

export const DECLINES: Record<string, { code: string; decline_code?: string; message: string }> = {
  pm_card_chargeDeclined: {
    code: 'card_declined',
    decline_code: 'generic_decline',
    message: 'Your card was declined.',
  },
  pm_card_chargeDeclinedInsufficientFunds: {
    code: 'card_declined',
    decline_code: 'insufficient_funds',
    message: 'Your card has insufficient funds.',
  },
  pm_card_chargeDeclinedExpiredCard: { code: 'expired_card', message: 'Your card has expired.' },
};
export const SUCCEEDS = new Set(['pm_card_visa', 'pm_card_mastercard']);
// A bank debit: `processing` until a test moves it (its object in fake.intents), as Stripe's ACH test account.
export const PROCESSING = new Set(['pm_usBankAccount_success']);
export const THREE_DS = new Set(['pm_card_authenticationRequired', 'pm_card_threeDSecure2Required']);

export const id = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;
