import type { Static } from '@sinclair/typebox';
// Type-only: erased at build time, so the client carries no server code at run time.
import type {
  ActivateBody,
  ActivateResult,
  AccountSummary,
  Balance,
  CreateKeyBody,
  CreatedKey,
  KeyList,
  ProjectKey,
  RotatedKey,
} from '../plugins/account/schemas.js';
import type { Ok } from '../core/http/ok.js';
import type {
  topupBody,
  TopupList,
  TopupRecord as TopupRecordSchema,
  TopupState as TopupStateSchema,
} from '../plugins/account/topup-schemas.js';
import type { TierUpgradeBody } from '../plugins/account/tier-routes.js';
import type {
  UsageQuery as UsageQuerySchema,
  UsageReport as UsageReportSchema,
} from '../plugins/account/usage-schemas.js';

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

export type TopupState = Static<typeof TopupStateSchema>;
export type TopupRequest = Static<ReturnType<typeof topupBody>>;
export type TopupRecord = Static<typeof TopupRecordSchema>;
export type TopupPage = Static<typeof TopupList>;
export type UpgradeTierRequest = Static<typeof TierUpgradeBody>;
export type UsageQuery = Partial<Static<typeof UsageQuerySchema>>;
export type UsageReport = Static<typeof UsageReportSchema>;

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
