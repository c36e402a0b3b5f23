import type { Static } from '@sinclair/typebox';
// Type-only: erased at build time, so the client carries no server code at run time.
import type {
  ActivateBody, ActivateResult, AccountSummary, Balance, CreateKeyBody, CreatedKey, KeyList, Ok, ProjectKey, RotatedKey,
} from '../plugins/account/schemas.js';

// The account area's wire, from the TypeBox schemas the server validates and serializes with.

export type ActivateRequest = Static<typeof ActivateBody>;
export type ActivateResponse = Static<typeof ActivateResult>;
export type BalanceResponse = Static<typeof Balance>;
export type AccountSummaryResponse = Static<typeof AccountSummary>;
export type ProjectKeyItem = Static<typeof ProjectKey>;
export type KeyPage = Static<typeof KeyList>;
export type CreateKeyRequest = Static<typeof CreateKeyBody>;
export type CreatedKeyResponse = Static<typeof CreatedKey>;
export type RotatedKeyResponse = Static<typeof RotatedKey>;
export type OkResponse = Static<typeof Ok>;

// Top-up, tier upgrade and usage, typed from the interface spec and the conventions until
// their schemas sit beside the others in plugins/account/schemas.ts.

export type TopupState = 'pending' | 'succeeded' | 'failed' | 'expired' | 'canceled';

export interface TopupRequest {
  /** USD to add to the wallet (5 to 10,000 by default). */
  amount_usd: number;
  /** Where the hosted checkout sends the browser afterwards. */
  return_url?: string;
  idempotency_key?: string;
}

export interface TopupRecord {
  topup_id: string;
  amount_usd: number;
  state: TopupState;
  /** The hosted checkout to open while the top-up is pending. */
  next_action_url?: string;
  checkout_url?: string;
  [field: string]: unknown;
}

export interface UpgradeTierRequest {
  /** A tier id from the gateway's config (`pro`). */
  target_tier: string;
}

export interface UsageQuery {
  /** ISO 8601 start (inclusive). */
  from?: string;
  /** ISO 8601 end (exclusive). */
  to?: string;
  group_by?: 'day' | 'capability' | 'vendor' | (string & {});
}

export interface UsageReport {
  items: Array<Record<string, unknown>>;
  [field: string]: unknown;
}

export interface ListQuery {
  /** Items a page, 1 to 200 (default 50). */
  limit?: number;
  cursor?: string;
}

/** What the last metered call cost, from the x-svc-* response headers. */
export interface CallCost {
  cost_usd: number;
  balance_usd?: number;
  vendor?: string;
  latency_ms?: number;
}

export interface RequestOptions {
  /** Sent as the `idempotency-key` header: a retry with the same key does the work once. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}
