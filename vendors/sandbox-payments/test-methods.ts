import type { ChargeOutput } from '../../core/kit/vendor.js';

// The sandbox processor's test payment methods, named and behaving as Stripe's test payment
// methods do (https://docs.stripe.com/testing): a charge's outcome is its payment method's, so a
// laptop or a test can walk every branch of a payment without a processor.

export type Behaviour =
  | { kind: 'succeeds' }
  | { kind: 'declined'; failure_code: string; decline_code?: string; message: string }
  | { kind: 'requires_action' }
  | { kind: 'delayed' };

const declined = (failure_code: string, decline_code: string | undefined, message: string): Behaviour => ({
  kind: 'declined',
  failure_code,
  ...(decline_code ? { decline_code } : {}),
  message,
});

export const TEST_METHODS: Readonly<Record<string, Behaviour>> = {
  pm_card_visa: { kind: 'succeeds' },
  pm_card_mastercard: { kind: 'succeeds' },
  pm_card_amex: { kind: 'succeeds' },
  pm_card_chargeDeclined: declined('card_declined', 'generic_decline', 'Your card was declined.'),
  pm_card_chargeDeclinedInsufficientFunds: declined(
    'card_declined',
    'insufficient_funds',
    'Your card has insufficient funds.'
  ),
  pm_card_chargeDeclinedFraudulent: declined('card_declined', 'fraudulent', 'Your card was declined.'),
  pm_card_chargeDeclinedExpiredCard: declined('expired_card', undefined, 'Your card has expired.'),
  pm_card_chargeDeclinedIncorrectCvc: declined('incorrect_cvc', undefined, "Your card's security code is incorrect."),
  pm_card_chargeDeclinedProcessingError: declined(
    'processing_error',
    undefined,
    'An error occurred while processing your card. Try again in a little bit.'
  ),
  // 3-D Secure on every charge: the payer authenticates on the gateway's hosted page.
  pm_card_authenticationRequired: { kind: 'requires_action' },
  pm_card_threeDSecure2Required: { kind: 'requires_action' },
  // A debit that settles later (Stripe's bank debits): pending, then succeeded.
  pm_usBankAccount_success: { kind: 'delayed' },
  pm_sepaDebit_success: { kind: 'delayed' },
};

/** The outcome of a charge with a known test method, made now. */
export function outcomeOf(b: Behaviour, vendorRef: string, authUrl: string): ChargeOutput {
  switch (b.kind) {
    case 'succeeds':
      return { vendor_ref: vendorRef, state: 'succeeded' };
    case 'declined':
      return {
        vendor_ref: vendorRef,
        state: 'failed',
        failure_code: b.failure_code,
        ...(b.decline_code ? { decline_code: b.decline_code } : {}),
        failure_message: b.message,
      };
    case 'requires_action':
      return { vendor_ref: vendorRef, state: 'requires_action', next_action_url: authUrl };
    case 'delayed':
      return { vendor_ref: vendorRef, state: 'pending' };
  }
}
