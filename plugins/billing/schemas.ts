import { Type, type Static } from '@sinclair/typebox';
import { IdempotencyKey } from '../../core/kit/area.js';

// The billing wire: amounts are integers in the currency's smallest unit (currencies.ts).

const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds.' });
const Minor = (description: string) => Type.Integer({ minimum: 1, description });
const Ref = (description: string) =>
  Type.String({ minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$', description });

export const ChargeBody = Type.Object(
  {
    amount: Minor("In the currency's smallest unit (ISO 4217 exponent: JPY 500 is ¥500, USD 500 is $5.00)."),
    currency: Type.String({ pattern: '^[A-Za-z]{3}$', description: 'ISO 4217 code (`USD`, `JPY`, `KWD`).' }),
    customer_id: Type.Optional(Ref("Your end customer's id at the payments vendor (Stripe: `cus_…`).")),
    payment_method_id: Type.Optional(
      Ref('The saved payment method to charge (Stripe: `pm_…`); required by every vendor the gateway ships.')
    ),
    return_url: Type.Optional(
      Type.String({
        format: 'uri',
        pattern: '^https?://',
        maxLength: 2048,
        description: 'Where a payer who had to authenticate (3-D Secure) is sent afterwards.',
      })
    ),
    idempotency_key: Type.Optional(IdempotencyKey),
  },
  {
    additionalProperties: false,
    // The sandbox processor's test card, so discovery's curl example runs on a fresh gateway.
    examples: [{ amount: 1050, currency: 'USD', payment_method_id: 'pm_card_visa' }],
  }
);
export type ChargeBodyT = Static<typeof ChargeBody>;

const ErrorMember = Type.Object({
  code: Type.String({ description: "The vendor's code: `card_declined`, `expired_card`, `authentication_failed`…" }),
  message: Type.String(),
  decline_code: Type.Optional(Type.String({ description: 'Why the issuer declined: `insufficient_funds`…' })),
});

export const ChargeState = Type.Union(
  ['pending', 'requires_action', 'succeeded', 'failed', 'partially_refunded', 'refunded'].map((s) => Type.Literal(s))
);

export const Charge = Type.Object({
  charge_id: Type.String({ pattern: '^ch_[0-9A-Za-z]+$' }),
  amount: Type.Integer(),
  currency: Type.String(),
  state: ChargeState,
  amount_refunded: Type.Integer({ description: 'Refunds pending or succeeded, in the smallest unit.' }),
  customer_id: Type.Optional(Type.String()),
  payment_method_id: Type.String(),
  vendor: Type.String(),
  next_action_url: Type.Optional(Type.String({ description: 'While `requires_action`: the page the payer opens.' })),
  error: Type.Optional(ErrorMember),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type ChargeT = Static<typeof Charge>;

export const RefundBody = Type.Object(
  {
    charge_id: Type.String({ minLength: 1, maxLength: 64 }),
    amount: Type.Optional(Minor('In the smallest unit; left out, all that is left of the charge.')),
    idempotency_key: Type.Optional(IdempotencyKey),
  },
  { additionalProperties: false }
);
export type RefundBodyT = Static<typeof RefundBody>;

export const RefundState = Type.Union(['pending', 'succeeded', 'failed'].map((s) => Type.Literal(s)));

export const Refund = Type.Object({
  refund_id: Type.String({ pattern: '^re_[0-9A-Za-z]+$' }),
  charge_id: Type.String(),
  amount: Type.Integer(),
  currency: Type.String(),
  state: RefundState,
  error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type RefundT = Static<typeof Refund>;

export const IdParams = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false }
);

export const ChargeListQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'Items a page (max 200).' }),
    cursor: Type.Optional(Type.String({ description: 'next_cursor of the previous page.' })),
    customer_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'Only this customer.' })),
  },
  { additionalProperties: false }
);
export type ChargeListQueryT = Static<typeof ChargeListQuery>;

export const RefundListQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'Items a page (max 200).' }),
    cursor: Type.Optional(Type.String({ description: 'next_cursor of the previous page.' })),
    charge_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "Only this charge's." })),
    state: Type.Optional(RefundState),
  },
  { additionalProperties: false }
);
export type RefundListQueryT = Static<typeof RefundListQuery>;
