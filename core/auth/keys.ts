import { hash } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { base62, newId } from '../ids.js';
import { apiError } from '../errors.js';
import { requireWithin } from './key-grants.js';
import type { Principal } from './principal.js';
import { newestFirst } from '../db/newest-first.js';

// Re-exported: callers take the principal from where keys are looked up.
export type { Principal };

export interface KeyRow {
  key_id: string;
  label: string;
  scopes: string[];
  created_at: number;
  expires_at: number | null;
}

export const KEY_PREFIX = 'sk_live_';
const KEY_SHAPE = /^sk_live_[0-9A-Za-z]{32}$/;

// One-shot hash: no Hash object per call (this runs on every request).
export function hashKey(secret: string): string {
  return hash('sha256', secret, 'hex');
}

interface CacheEntry {
  principal: Principal | null;
  expiresAt: number | null; // key expiry (rotation grace), checked on every hit
  cachedUntil: number;
}

interface StatusEntry {
  status: string | null;
  cachedUntil: number;
}

/**
 * Keys are stored as SHA-256 hashes; the secret exists only in the response that creates it.
 * Lookups are cached (a few seconds, bounded) because every request does one. Revocation,
 * rotation and tier changes invalidate the cache at once on this node, and through the bus
 * on the others. Rotation is a chain: a key has at most one successor.
 */
export class KeyStore {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly statuses = new Map<string, StatusEntry>();
  private readonly ttlMs: number;
  private readonly max = 10_000;

  constructor(
    private readonly db: Kysely<any>,
    opts: { ttlMs?: number } = {}
  ) {
    this.ttlMs = opts.ttlMs ?? 10_000;
  }

  async create(
    accountId: string,
    projectId: string,
    label: string,
    scopes: string[],
    trx: Kysely<any> | Transaction<any> = this.db,
    expiresAt: number | null = null
  ) {
    const secret = KEY_PREFIX + base62(32);
    const row = {
      key_id: newId('key'),
      account_id: accountId,
      project_id: projectId,
      label,
      scopes: JSON.stringify(scopes),
      hash: hashKey(secret),
      created_at: Date.now(),
      expires_at: expiresAt,
      revoked_at: null,
    };
    await trx.insertInto('api_keys').values(row).execute();
    return {
      secret,
      key: { key_id: row.key_id, label, scopes, created_at: row.created_at, expires_at: expiresAt } as KeyRow,
    };
  }

  /**
   * The principal of a key from the cache alone: `undefined` when the cache cannot say (then
   * call `lookup`). Synchronous, so the common case of a request costs no promise.
   */
  peek(secret: string, now = Date.now()): Principal | null | undefined {
    if (!KEY_SHAPE.test(secret)) return null;
    const hit = this.cache.get(hashKey(secret));
    if (!hit || hit.cachedUntil <= now) return undefined;
    if (hit.expiresAt !== null && hit.expiresAt <= now) return null;
    return hit.principal;
  }

  async lookup(secret: string): Promise<Principal | null> {
    const now = Date.now();
    const cached = this.peek(secret, now);
    if (cached !== undefined) return cached;
    const hash = hashKey(secret);
    const row = await this.db
      .selectFrom('api_keys as k')
      .innerJoin('accounts as a', 'a.account_id', 'k.account_id')
      .select([
        'k.key_id',
        'k.account_id',
        'k.project_id',
        'k.scopes',
        'k.expires_at',
        'k.revoked_at',
        'k.replaced_by',
        'a.tier',
        'a.region',
        'a.kind',
        'a.status',
      ])
      .where('k.hash', '=', hash)
      .executeTakeFirst();
    const valid = row && row.revoked_at === null;
    const principal: Principal | null = valid
      ? {
          keyId: row.key_id,
          accountId: row.account_id,
          projectId: row.project_id,
          scopes: JSON.parse(row.scopes),
          tier: row.tier,
          region: row.region,
          kind: row.kind,
          status: row.status,
          replacedBy: row.replaced_by ?? null,
        }
      : null;
    if (this.cache.size >= this.max) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(hash, {
      principal,
      expiresAt: valid ? (row.expires_at ?? null) : null,
      cachedUntil: now + this.ttlMs,
    });
    if (valid && row.expires_at !== null && row.expires_at <= now) return null;
    return principal;
  }

  /** Set by the app: tells the other nodes (through the bus) to drop their cached lookups too. */
  onInvalidate?: (accountId: string) => void;

  /** Drop cached lookups of one account (after revoke, rotate, tier change, suspension). */
  invalidateAccount(accountId: string): void {
    this.dropAccount(accountId);
    this.onInvalidate?.(accountId);
  }

  /** Drop this node's cached lookups of an account (called for bus messages). */
  dropAccount(accountId: string): void {
    for (const [h, e] of this.cache) if (e.principal?.accountId === accountId) this.cache.delete(h);
    this.statuses.delete(accountId);
  }

  /**
   * An account's status (`active`, `suspended`), or null for no such account, for requests
   * that carry no API key (S3 signatures, public objects): cached and invalidated exactly as
   * key lookups are, so a suspension reaches them within the same bound.
   */
  async accountStatus(accountId: string): Promise<string | null> {
    const now = Date.now();
    const hit = this.statuses.get(accountId);
    if (hit && hit.cachedUntil > now) return hit.status;
    const row = await this.db
      .selectFrom('accounts')
      .select('status')
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    const status: string | null = row?.status ?? null;
    if (this.statuses.size >= this.max) this.statuses.delete(this.statuses.keys().next().value!);
    this.statuses.set(accountId, { status, cachedUntil: now + this.ttlMs });
    return status;
  }

  async list(accountId: string, limit: number, before?: { t: number; id: string }): Promise<KeyRow[]> {
    const q = this.db
      .selectFrom('api_keys')
      .select(['key_id', 'label', 'scopes', 'created_at', 'expires_at'])
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', Date.now())]));
    const rows = await newestFirst(q, 'key_id', limit, before).execute();
    return rows.map((r) => ({
      ...r,
      scopes: JSON.parse(r.scopes),
      created_at: Number(r.created_at),
      expires_at: r.expires_at === null ? null : Number(r.expires_at),
    }));
  }

  private async active(accountId: string, keyId: string, db: Kysely<any> | Transaction<any> = this.db) {
    const row = await db
      .selectFrom('api_keys')
      .selectAll()
      .where('key_id', '=', keyId)
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (!row || (row.expires_at !== null && Number(row.expires_at) <= Date.now()))
      throw apiError('not_found', `No key ${keyId} in this account.`, { param: 'key_id' });
    return row;
  }

  /**
   * Revoke a key at once, and every key it replaced by rotation that is still in its grace
   * period: a successor revoked because it leaked must not leave the older secrets working.
   * `grantor` is the caller's scopes: a key revokes only keys within them.
   */
  async revoke(accountId: string, keyId: string, grantor: readonly string[]): Promise<void> {
    const row = await this.active(accountId, keyId);
    requireWithin(grantor, JSON.parse(row.scopes), `revoke ${keyId}`);
    await this.db.transaction().execute(async (trx) => {
      const now = Date.now();
      let ids = [keyId];
      while (ids.length) {
        const done = await trx
          .updateTable('api_keys')
          .set({ revoked_at: now })
          .where('account_id', '=', accountId)
          .where((eb) => eb.or([eb('key_id', 'in', ids), eb('replaced_by', 'in', ids)]))
          .where('revoked_at', 'is', null)
          .returning('key_id')
          .execute();
        const revoked = new Set(done.map((r) => r.key_id));
        // The next round: the predecessors just revoked, whose own predecessors may still live.
        ids = [...revoked].filter((id) => !ids.includes(id));
      }
    });
    this.invalidateAccount(accountId);
  }

  /**
   * A new secret with the same label and scopes; the old one keeps working for `graceSeconds`.
   * `grantor` is the caller's scopes: a key re-issues only keys within them. A key that
   * already has a successor is not rotated again (409): one live successor, never a fork.
   * Given `trx`, the rotation joins it (the route commits it with its idempotent answer) and
   * the caller drops the cached lookups once it committed (`invalidateAccount`).
   */
  async rotate(
    accountId: string,
    keyId: string,
    graceSeconds: number,
    grantor: readonly string[],
    trx?: Transaction<any>
  ) {
    const run = async (trx: Transaction<any>) => {
      const old = await this.active(accountId, keyId, trx);
      if (old.replaced_by) throw alreadyRotated(keyId, old.replaced_by);
      const scopes: string[] = JSON.parse(old.scopes);
      requireWithin(grantor, scopes, `rotate ${keyId}`);
      const now = Date.now();
      const expiresAt = now + graceSeconds * 1000;
      const created = await this.create(accountId, old.project_id, old.label, scopes, trx);
      // Conditional on "no successor yet": of two rotations at once, one wins; the other
      // rolls back its new key and answers 409.
      const res = await trx
        .updateTable('api_keys')
        .set({
          replaced_by: created.key.key_id,
          ...(graceSeconds > 0 ? { expires_at: expiresAt } : { revoked_at: now }),
        })
        .where('key_id', '=', keyId)
        .where('replaced_by', 'is', null)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) throw alreadyRotated(keyId);
      return { ...created, old_key_expires_at: graceSeconds > 0 ? expiresAt : now };
    };
    if (trx) return run(trx);
    const result = await this.db.transaction().execute(run);
    this.invalidateAccount(accountId);
    return result;
  }
}

function alreadyRotated(keyId: string, successor?: string) {
  const next = successor ? `its successor is ${successor}; rotate that key instead` : 'rotate its successor instead';
  return apiError('conflict', `Key ${keyId} was already rotated: ${next} (GET /v1/account/keys lists the live keys).`, {
    param: 'key_id',
  });
}
