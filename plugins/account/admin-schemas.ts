import { Type, type Static } from '@sinclair/typebox';
import { Page } from '../../core/kit/area.js';
import { Timestamp } from './schemas.js';

export const AdminAccount = Type.Object({
  account_id: Type.String(),
  kind: Type.String(),
  status: Type.Union([Type.Literal('active'), Type.Literal('suspended')]),
  tier: Type.String(),
  region: Type.String(),
  balance_usd: Type.Number(),
  created_at: Timestamp,
});

export const AdminAccountList = Page(AdminAccount);

export const AccountIdParams = Type.Object(
  { account_id: Type.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false }
);

export const AdminCreditBody = Type.Object(
  {
    amount_usd: Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000, description: 'USD to add to the wallet.' }),
    note: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Why; stored on the ledger entry.' })),
  },
  { additionalProperties: false }
);

export type AdminCreditBodyT = Static<typeof AdminCreditBody>;
