import type { Static } from '@sinclair/typebox';
// Type-only: erased at build time, so the client carries no server code at run time.
import type {
  Charge as ChargeSchema,
  ChargeBody,
  ChargeListQuery as ChargeListQuerySchema,
  Refund as RefundSchema,
  RefundBody,
  RefundListQuery as RefundListQuerySchema,
} from '../plugins/billing/schemas.js';
import type { PageOf } from './paginate.js';

// The billing area's wire, from the TypeBox schemas the server validates and serializes with.

export type CreateChargeRequest = Omit<Static<typeof ChargeBody>, 'idempotency_key'>;
export type Charge = Static<typeof ChargeSchema>;
export type ChargeState = Charge['state'];
export type ChargePage = PageOf<Charge>;
export type ChargeListQuery = Partial<Static<typeof ChargeListQuerySchema>>;
export type CreateRefundRequest = Omit<Static<typeof RefundBody>, 'idempotency_key'>;
export type Refund = Static<typeof RefundSchema>;
export type RefundState = Refund['state'];
export type RefundPage = PageOf<Refund>;
export type RefundListQuery = Partial<Static<typeof RefundListQuerySchema>>;
