import { apiError, base62, now, type Svc } from '../../core/kit/area.js';

// The account's public write-only key for PostHog SDKs (`phc_…`): it can send events and
// evaluate flags, nothing else. A key never changes owner once made, but the account's tier
// and status do: a lookup is kept a few seconds, as the core keeps project keys.

export interface KeyAccount {
  accountId: string;
  tier: string;
  status: string;
}

const TTL_MS = 10_000;
const MAX_CACHED = 10_000;

export class PosthogKeys {
  private readonly cache = new Map<string, { v: KeyAccount | null; until: number }>();
  constructor(private readonly svc: Svc) {}

  /** The account's key, made on first use. */
  async forAccount(accountId: string): Promise<string> {
    await this.svc.db
      .insertInto('analytics_public_keys')
      .values({ account_id: accountId, public_key: `phc_${base62(43)}`, created_at: now() })
      .onConflict((oc) => oc.column('account_id').doNothing())
      .execute();
    const row = await this.svc.db
      .selectFrom('analytics_public_keys')
      .select('public_key')
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    return row.public_key;
  }

  /** The account a key belongs to, with its tier and status, or null. */
  async account(key: string): Promise<KeyAccount | null> {
    const t = Date.now();
    const hit = this.cache.get(key);
    if (hit && hit.until > t) return hit.v;
    const row = await this.svc.db
      .selectFrom('analytics_public_keys as k')
      .innerJoin('accounts as a', 'a.account_id', 'k.account_id')
      .select(['k.account_id', 'a.tier', 'a.status'])
      .where('k.public_key', '=', key)
      .executeTakeFirst();
    const v = row
      ? { accountId: row.account_id as string, tier: row.tier as string, status: row.status as string }
      : null;
    if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, { v, until: t + TTL_MS });
    return v;
  }

  /** The active account of a key the SDK sent as `field`; else 401 (unknown key) or 403 (suspended). */
  async admit(key: unknown, field: string): Promise<KeyAccount> {
    const acct = typeof key === 'string' && key ? await this.account(key) : null;
    if (!acct)
      throw apiError('unauthenticated', `${field} is not a public key of this gateway (GET /v1/analytics/public-key).`);
    if (acct.status !== 'active') throw apiError('forbidden', 'This account is suspended.');
    return acct;
  }
}
