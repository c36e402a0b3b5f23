import type { CompiledQuery, Kysely, Transaction } from 'kysely';
import { type Bus, type CheckCode, newId, newestFirst } from '../../core/kit/area.js';
import { byokKey, open, seal } from './crypto.js';

export type ByokState = 'active' | 'invalid' | 'revoked';
export interface TestResult {
  ok: boolean;
  latency_ms?: number;
  error?: { code: CheckCode; message: string };
}

export interface ByokRow {
  byok_id: string;
  account_id: string;
  provider: string;
  alias: string;
  state: ByokState;
  created_at: number;
  test_result?: TestResult;
}

function row(r: any): ByokRow {
  return {
    byok_id: r.byok_id,
    account_id: r.account_id,
    provider: r.provider,
    alias: r.alias,
    state: r.state,
    created_at: Number(r.created_at),
    ...(r.test_result ? { test_result: JSON.parse(r.test_result) } : {}),
  };
}

/** Bus topic announcing that an account's BYOK keys changed (created, tested, revoked): `{ accountId }`. */
export const BYOK_CHANGED = 'byok.changed';

/** BYOK credentials, sealed at rest; the clear text exists only in memory for one call. */
export class ByokStore {
  private readonly key: Buffer;

  /** `bus`: where a change to an account's keys is announced (BYOK_CHANGED), for caches on every node. */
  constructor(
    private readonly db: Kysely<any>,
    master: Buffer,
    private readonly bus?: Bus
  ) {
    this.key = byokKey(master);
  }

  /** Tell every node (the AI area's no-BYOK cache among them) that the account's keys changed. */
  changed(accountId: string): void {
    // A lost announcement costs at most a cache's expiry (the AI area's is seconds).
    this.bus?.publish(BYOK_CHANGED, { accountId }).catch(() => undefined);
  }

  /**
   * Register credentials. Given `trx`, the row joins it (the route commits it with its
   * idempotent answer) and the caller announces the change once it committed (`changed`).
   */
  async create(
    accountId: string,
    provider: string,
    alias: string,
    credentials: Record<string, string>,
    trx?: Transaction<any>
  ): Promise<ByokRow> {
    const byok_id = newId('byok');
    const created_at = Date.now();
    await (trx ?? this.db)
      .insertInto('byok_keys')
      .values({
        byok_id,
        account_id: accountId,
        provider,
        alias,
        state: 'active',
        secret: seal(this.key, JSON.stringify(credentials), `${byok_id}|${accountId}`),
        test_result: null,
        created_at,
        updated_at: created_at,
      })
      .execute();
    if (!trx) this.changed(accountId);
    return { byok_id, account_id: accountId, provider, alias, state: 'active', created_at };
  }

  /** Newest first, `limit` rows after the cursor position. */
  async list(accountId: string, limit: number, after?: { t: number; id: string }): Promise<ByokRow[]> {
    const q = this.db
      .selectFrom('byok_keys')
      .select(['byok_id', 'account_id', 'provider', 'alias', 'state', 'created_at', 'test_result'])
      .where('account_id', '=', accountId);
    const rows = await newestFirst(q, 'byok_id', limit, after).execute();
    return rows.map(row);
  }

  async get(accountId: string, byokId: string): Promise<ByokRow | undefined> {
    const r = await this.db
      .selectFrom('byok_keys')
      .select(['byok_id', 'account_id', 'provider', 'alias', 'state', 'created_at', 'test_result'])
      .where('account_id', '=', accountId)
      .where('byok_id', '=', byokId)
      .executeTakeFirst();
    return r ? row(r) : undefined;
  }

  async credentials(accountId: string, byokId: string): Promise<Record<string, string>> {
    const r = await this.db
      .selectFrom('byok_keys')
      .select('secret')
      .where('account_id', '=', accountId)
      .where('byok_id', '=', byokId)
      .executeTakeFirstOrThrow();
    return JSON.parse(open(this.key, r.secret, `${byokId}|${accountId}`));
  }

  // Run on every AI call: built and compiled once (the SQL differs by dialect, so Kysely
  // writes it), then run with each account's id.
  private activeQuery?: CompiledQuery;

  /** The newest active key per provider, decrypted: what the AI router uses first. */
  async active(accountId: string): Promise<Map<string, Record<string, string>>> {
    this.activeQuery ??= this.db
      .selectFrom('byok_keys')
      .select(['byok_id', 'provider', 'secret'])
      .where('account_id', '=', '')
      .where('state', '=', 'active')
      .orderBy('created_at', 'asc')
      .compile();
    const { rows } = await this.db.executeQuery<{ byok_id: string; provider: string; secret: string }>({
      ...this.activeQuery,
      parameters: [accountId, 'active'],
    });
    const out = new Map<string, Record<string, string>>();
    for (const r of rows) out.set(r.provider, JSON.parse(open(this.key, r.secret, `${r.byok_id}|${accountId}`)));
    return out;
  }

  /** Record a test; a failure marks the key invalid, a pass active again. Never revives a revoked key. */
  async recordTest(accountId: string, byokId: string, result: TestResult): Promise<void> {
    await this.db
      .updateTable('byok_keys')
      .set({ test_result: JSON.stringify(result), state: result.ok ? 'active' : 'invalid', updated_at: Date.now() })
      .where('account_id', '=', accountId)
      .where('byok_id', '=', byokId)
      .where('state', '!=', 'revoked')
      .execute();
    this.changed(accountId);
  }

  /**
   * The vendor refused these credentials on a live call: the account's active key holding
   * them becomes `invalid`, as a failed test would make it (a new test revives it).
   */
  async invalidate(
    accountId: string,
    credentials: Record<string, string>,
    error: { code: CheckCode; message: string }
  ): Promise<void> {
    const rows = await this.db
      .selectFrom('byok_keys')
      .select(['byok_id', 'secret'])
      .where('account_id', '=', accountId)
      .where('state', '=', 'active')
      .execute();
    const used = JSON.stringify(credentials);
    const hit = rows.find((r) => open(this.key, r.secret, `${r.byok_id}|${accountId}`) === used);
    if (hit) await this.recordTest(accountId, hit.byok_id, { ok: false, error });
  }

  /** Revoke for good, and drop the sealed secret: a revoked key can never be used again. */
  async revoke(accountId: string, byokId: string): Promise<boolean> {
    const res = await this.db
      .updateTable('byok_keys')
      .set({ state: 'revoked', secret: '', updated_at: Date.now() })
      .where('account_id', '=', accountId)
      .where('byok_id', '=', byokId)
      .where('state', '!=', 'revoked')
      .executeTakeFirst();
    this.changed(accountId);
    return Number(res.numUpdatedRows) === 1;
  }
}
