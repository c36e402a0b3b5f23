import type { Kysely } from 'kysely';

/**
 * Spent `service` solutions, in the database so a restart forgets none and every node sees the
 * others': the challenge is the primary key, so of two uses, at once or a day apart, on one
 * node or two, the insert of exactly one succeeds. Rows go once their challenge expired (retention).
 */
export class ReplayStore {
  constructor(private readonly db: Kysely<any>) {}

  /** True the first time a challenge is spent; false ever after, until it expired and was swept. */
  async spend(challenge: string, accountId: string, expiresAt: number): Promise<boolean> {
    const r = await this.db
      .insertInto('captcha_spent')
      .values({ challenge, account_id: accountId, expires_at: expiresAt })
      .onConflict((oc) => oc.column('challenge').doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  /** Remove up to `limit` entries that expired before `before`: none of them can verify again. */
  async sweep(before: number, limit: number): Promise<number> {
    const old = this.db.selectFrom('captcha_spent').select('challenge').where('expires_at', '<', before).limit(limit);
    const r = await this.db.deleteFrom('captcha_spent').where('challenge', 'in', old).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
