import type { Kysely } from 'kysely';
import type { Hold } from '../wallet/wallet.js';
import type { Planned } from '../router/planner.js';
import type { OutboxRecord } from './types.js';

// The outbox row as stored, and as an area reads it.

export const TABLE = 'outbox_records';

/** The attempt recorded before a vendor call, cleared with its outcome. */
export interface OpenAttempt {
  n: number;
  /** Every instance the router may have called on it (the route, in order). */
  vendors: string[];
  at: number;
}

export function toRecord<D>(r: any): OutboxRecord<D> {
  return {
    id: r.record_id,
    accountId: r.account_id,
    kind: r.kind,
    state: r.state,
    data: JSON.parse(r.data) as D,
    vendor: r.vendor ?? null,
    vendorMessageId: r.vendor_message_id ?? null,
    attempts: Number(r.attempts),
    costMicros: Number(r.cost_micros),
    error: r.error_code ? { code: r.error_code, message: r.error_message ?? '' } : null,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

export function holdOf(r: any): Hold | undefined {
  if (!r.hold_id) return undefined;
  return { holdId: r.hold_id, accountId: r.account_id, amount: Number(r.hold_micros), capability: r.capability };
}

export function routeOf(r: any): Planned[] {
  return JSON.parse(r.route) as Planned[];
}

export function openAttemptOf(r: any): OpenAttempt | undefined {
  return r.attempt_open ? (JSON.parse(r.attempt_open) as OpenAttempt) : undefined;
}

export function rowById(db: Kysely<any>, id: string, kind: string): Promise<any> {
  return db.selectFrom(TABLE).selectAll().where('record_id', '=', id).where('kind', '=', kind).executeTakeFirst();
}
