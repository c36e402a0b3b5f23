import { Type, type Static } from '@sinclair/typebox';

/** `plugins.billing` in the config file. */
export const BillingConfig = Type.Object(
  {
    max_amount: Type.Integer({
      minimum: 1,
      maximum: 999_999_999_999,
      default: 99_999_999,
      description: "Largest charge, in the currency's smallest unit (Stripe's own cap is 99,999,999).",
    }),
    lookup_seconds: Type.Array(Type.Integer({ minimum: 1, maximum: 86_400 }), {
      minItems: 1,
      maxItems: 50,
      default: [5, 15, 60, 300, 900, 3600, 3600, 3600, 3600, 3600, 3600, 3600],
      description:
        'When a charge left `pending` or `requires_action` is looked up again at its vendor, in seconds after '
        + 'the previous lookup; after the last it stays as it is until it is read.',
    }),
  },
  { additionalProperties: false, default: {} }
);

export type BillingConfigT = Static<typeof BillingConfig>;
