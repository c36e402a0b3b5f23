import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../core/kit/area.js';

/** JSON with sorted keys, so field order never changes the hash. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .filter((k) => (v as any)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical((v as any)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

/**
 * `cache_strategy: service`: an exact-match answer cache per account. The key is a hash of
 * the normalized request (only the fields that change the answer), kept `ttl` ms.
 */
export class ChatCache {
  constructor(
    private readonly db: Kysely<any>,
    private readonly ttlMs: number
  ) {}

  key(accountId: string, request: Record<string, unknown>): string {
    return createHash('sha256')
      .update(`${accountId}\n${canonical(request)}`)
      .digest('hex');
  }

  async get<T>(accountId: string, hash: string): Promise<T | undefined> {
    const row = await this.db
      .selectFrom('ai_cache')
      .select(['response', 'expires_at'])
      .where('account_id', '=', accountId)
      .where('hash', '=', hash)
      .executeTakeFirst();
    if (!row || Number(row.expires_at) <= Date.now()) return undefined;
    return JSON.parse(row.response) as T;
  }

  async put(accountId: string, hash: string, value: unknown): Promise<void> {
    const now = Date.now();
    await this.db.deleteFrom('ai_cache').where('account_id', '=', accountId).where('hash', '=', hash).execute();
    try {
      await this.db
        .insertInto('ai_cache')
        .values({
          account_id: accountId,
          hash,
          response: JSON.stringify(value),
          created_at: now,
          expires_at: now + this.ttlMs,
        })
        .execute();
    } catch (e) {
      if (!isUniqueViolation(e)) throw e; // a concurrent identical call stored it first
    }
  }

  async sweep(): Promise<void> {
    await this.db.deleteFrom('ai_cache').where('expires_at', '<=', Date.now()).execute();
  }
}
