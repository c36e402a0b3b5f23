import { randomBytes, randomInt } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Principal } from '../../core/kit/area.js';

// An account's public ingest key: what a Sentry DSN carries (a browser page shows it to
// anyone), so it can only add errors to its own account, never read nor change anything. The
// project key never appears in a DSN. Sentry SDKs need a numeric project id in the DSN: each
// account gets a random one beside its key. The same key evaluates the account's flags from a
// browser (flags/public-access.ts): a page shows its flags' answers to its visitor anyway.

export interface IngestAccount {
  accountId: string;
  sentryProject: string;
  tier: string;
  status: string;
}

export interface PublicKeyRow {
  public_key: string;
  sentry_project: string;
}

const TTL_MS = 10_000;
const MAX_CACHED = 10_000;

export class PublicKeys {
  private readonly cache = new Map<string, { v: IngestAccount | null; until: number }>();
  private readonly principals = new WeakMap<IngestAccount, Principal>();

  constructor(private readonly db: Kysely<any>) {}

  /** The account's key, made on first use. */
  async forAccount(accountId: string): Promise<PublicKeyRow> {
    for (let tries = 0; ; tries++) {
      const found = await this.db
        .selectFrom('obs_public_keys')
        .select(['public_key', 'sentry_project'])
        .where('account_id', '=', accountId)
        .executeTakeFirst();
      if (found) return found;
      try {
        await this.db
          .insertInto('obs_public_keys')
          .values({
            account_id: accountId,
            public_key: randomBytes(16).toString('hex'),
            sentry_project: String(randomInt(100_000_000, 1_000_000_000)),
            created_at: Date.now(),
          })
          .onConflict((oc) => oc.column('account_id').doNothing())
          .execute();
      } catch (e) {
        // Another account drew the same project number: draw again.
        if (tries > 3) throw e;
      }
    }
  }

  /**
   * What the key may do where a route admits it (flags from a browser): read flags, in a rate
   * bucket of its own. Synchronous on a cached key: it runs on every evaluation.
   */
  principal = (publicKey: string): Principal | null | Promise<Principal | null> => {
    const hit = this.cache.get(publicKey);
    if (hit && hit.until > Date.now()) return this.asPrincipal(hit.v);
    return this.lookup(publicKey).then((v) => this.asPrincipal(v));
  };

  private asPrincipal(v: IngestAccount | null): Principal | null {
    if (!v) return null;
    let p = this.principals.get(v);
    if (!p) {
      p = {
        keyId: `public:${v.accountId}`,
        accountId: v.accountId,
        projectId: '',
        scopes: ['observability:read'],
        tier: v.tier,
        region: '',
        kind: 'public',
        status: v.status,
        replacedBy: null,
      };
      this.principals.set(v, p);
    }
    return p;
  }

  /** The account a public key belongs to, with its tier and status; cached a few seconds. */
  async lookup(publicKey: string): Promise<IngestAccount | null> {
    const now = Date.now();
    const hit = this.cache.get(publicKey);
    if (hit && hit.until > now) return hit.v;
    const row = await this.db
      .selectFrom('obs_public_keys as k')
      .innerJoin('accounts as a', 'a.account_id', 'k.account_id')
      .select(['k.account_id', 'k.sentry_project', 'a.tier', 'a.status'])
      .where('k.public_key', '=', publicKey)
      .executeTakeFirst();
    const v = row
      ? { accountId: row.account_id, sentryProject: row.sentry_project, tier: row.tier, status: row.status }
      : null;
    if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(publicKey, { v, until: now + TTL_MS });
    return v;
  }
}
