import { Type, type Static } from '@sinclair/typebox';
import { Page, IdempotencyKey } from '../../core/kit/area.js';
import { Timestamp } from './schemas.js';

// The top-up wire. The amount range comes from the config (wallet.topup_min_usd and
// topup_max_usd), so the body schema is built once at registration from those values.

export const TopupState = Type.Union(
  ['pending', 'succeeded', 'failed', 'expired', 'canceled'].map((s) => Type.Literal(s))
);

export function topupBody(minUsd: number, maxUsd: number) {
  return Type.Object(
    {
      amount_usd: Type.Number({
        minimum: minUsd,
        maximum: maxUsd,
        description: `USD to add to the wallet, ${minUsd} to ${maxUsd}, at most two decimals.`,
      }),
      return_url: Type.Optional(
        Type.String({
          format: 'uri',
          pattern: '^https?://',
          maxLength: 2048,
          description: 'Where the checkout sends the browser afterwards, with ?topup_id=&state= added.',
        })
      ),
      idempotency_key: Type.Optional(IdempotencyKey),
    },
    { additionalProperties: false }
  );
}

export type TopupBodyT = Static<ReturnType<typeof topupBody>>;

export const TopupRecord = Type.Object({
  topup_id: Type.String({ pattern: '^top_[0-9A-Za-z]+$' }),
  amount_usd: Type.Number(),
  currency: Type.String(),
  state: TopupState,
  next_action_url: Type.Optional(
    Type.String({ description: 'The hosted checkout to open while the top-up is pending.' })
  ),
  checkout_url: Type.String({
    description: 'The hosted checkout address (the same as next_action_url while pending).',
  }),
  return_url: Type.Optional(Type.String()),
  created_at: Timestamp,
  expires_at: Timestamp,
  completed_at: Type.Optional(Timestamp),
});

export const TopupList = Page(TopupRecord);

export const TopupIdParams = Type.Object(
  { topup_id: Type.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false }
);

export type TopupRecordT = Static<typeof TopupRecord>;
