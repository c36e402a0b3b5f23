import type { Kysely, Transaction } from 'kysely';
import {
  type CursorPos,
  type Hold,
  type Attempt,
  type CandidatePlan,
  type ChatInput,
  newestFirst,
} from '../../../core/kit/area.js';
import type { ChatResultT } from '../schemas.js';

export type BatchState = 'queued' | 'running' | 'succeeded' | 'failed' | 'canceled';
export const BATCH_STATES: readonly BatchState[] = ['queued', 'running', 'succeeded', 'failed', 'canceled'];
export const FINAL: readonly BatchState[] = ['succeeded', 'failed', 'canceled'];

/** How a batch runs: on the vendor's batch API, or as a plain call from a background job. */
export interface BatchRoute {
  mode: 'vendor' | 'direct';
  /** Candidate instance ids, in order. */
  order: string[];
  /** Those of them that run on the caller's own key (credentials are not stored here). */
  byok: string[];
  /** Attempts of the submit, kept for the result's metadata. */
  attempts?: Attempt[];
}

export interface BatchRow {
  batch_id: string;
  account_id: string;
  state: BatchState;
  input: string;
  route: string;
  hold_id: string;
  hold_micros: number | string;
  vendor: string | null;
  vendor_batch_id: string | null;
  step: number;
  result: string | null;
  error: string | null;
  cost_micros: number | string;
  created_at: number | string;
  updated_at: number | string;
  completed_at: number | string | null;
}

export const BATCH_CAPABILITY = 'ai.chat.batch';

/** The wallet hold a batch reserved at submit. */
export function holdOf(row: BatchRow): Hold {
  return {
    holdId: row.hold_id,
    accountId: row.account_id,
    amount: Number(row.hold_micros),
    capability: BATCH_CAPABILITY,
  };
}

/** Rows of `ai_batches`; every move is conditional on the state it leaves, so two nodes cannot both make it. */
export class BatchStore {
  constructor(private readonly db: Kysely<any>) {}

  async insert(row: BatchRow, trx: Kysely<any> | Transaction<any> = this.db): Promise<void> {
    await trx.insertInto('ai_batches').values(row).execute();
  }

  async get(batchId: string, trx: Kysely<any> | Transaction<any> = this.db): Promise<BatchRow | undefined> {
    return (await trx.selectFrom('ai_batches').selectAll().where('batch_id', '=', batchId).executeTakeFirst()) as
      | BatchRow
      | undefined;
  }

  /** Only the owner sees a batch: another account's id is as unknown as a made-up one. */
  async getFor(accountId: string, batchId: string): Promise<BatchRow | undefined> {
    return (await this.db
      .selectFrom('ai_batches')
      .selectAll()
      .where('batch_id', '=', batchId)
      .where('account_id', '=', accountId)
      .executeTakeFirst()) as BatchRow | undefined;
  }

  /** The account's batches, newest first, after `before` (a cursor), `limit` of them. */
  async listFor(accountId: string, limit: number, before?: CursorPos, state?: BatchState): Promise<BatchRow[]> {
    let q = this.db.selectFrom('ai_batches').selectAll().where('account_id', '=', accountId);
    if (state) q = q.where('state', '=', state);
    return (await newestFirst(q, 'batch_id', limit, before).execute()) as BatchRow[];
  }

  /** `trx`: the transaction that also moves the batch's money (its hold settled or released). */
  async move(
    batchId: string,
    from: BatchState[],
    patch: Partial<BatchRow>,
    step?: number,
    trx: Kysely<any> | Transaction<any> = this.db
  ): Promise<boolean> {
    let q = trx
      .updateTable('ai_batches')
      .set({ ...patch, updated_at: Date.now() })
      .where('batch_id', '=', batchId)
      .where('state', 'in', from);
    if (step !== undefined) q = q.where('step', '=', step);
    const r = await q.executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }
}

/**
 * A batch's chat as stored: the capability input and, beside it, each candidate's plan (its
 * batch prices, never a credential), handed to the router as CallOptions.plans when it runs.
 */
export type StoredBatchInput = ChatInput & { plan: Record<string, CandidatePlan> };

export const parseInput = (row: BatchRow): StoredBatchInput => JSON.parse(row.input) as StoredBatchInput;
export const parseRoute = (row: BatchRow): BatchRoute => JSON.parse(row.route) as BatchRoute;

/** The wire record of GET /v1/ai/batches/{id}. */
export function batchRecord(row: BatchRow) {
  const iso = (v: number | string | null) => (v === null ? null : new Date(Number(v)).toISOString());
  return {
    batch_id: row.batch_id,
    state: row.state,
    created_at: iso(row.created_at)!,
    completed_at: iso(row.completed_at),
    ...(row.result ? { result: JSON.parse(row.result) as ChatResultT } : {}),
    ...(row.error ? { error: JSON.parse(row.error) as { code: string; message: string } } : {}),
  };
}
