import type { Kysely } from 'kysely';
import { apiError, iso, newestFirst } from '../../core/kit/area.js';
import { normalAddress } from './address.js';

export type SuppressionReason = 'manual' | 'bounce' | 'complaint' | 'unsubscribe';

interface Row {
  account_id: string;
  email: string;
  reason: string;
  created_at: number | string;
}

const wire = (r: Row) => ({ email: r.email, reason: r.reason, created_at: iso(Number(r.created_at)) });

/** An account's addresses that no send reaches (bounced, complained, unsubscribed, added by hand). */
export class SuppressionStore {
  constructor(private readonly db: Kysely<any>) {}

  /** Add (or keep: the first reason stays) an address; answers the record. */
  async add(accountId: string, raw: string, reason: SuppressionReason, db: Kysely<any> = this.db) {
    const email = normalAddress(raw);
    await db
      .insertInto('email_suppressions')
      .values({ account_id: accountId, email, reason, created_at: Date.now() })
      .onConflict((oc) => oc.columns(['account_id', 'email']).doNothing())
      .execute();
    const row = await db
      .selectFrom('email_suppressions')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('email', '=', email)
      .executeTakeFirstOrThrow();
    return wire(row as Row);
  }

  /** Which of `emails` (normal form) are suppressed. */
  async which(accountId: string, emails: string[], db: Kysely<any> = this.db): Promise<Set<string>> {
    if (!emails.length) return new Set();
    const rows = await db
      .selectFrom('email_suppressions')
      .select('email')
      .where('account_id', '=', accountId)
      .where('email', 'in', emails)
      .execute();
    return new Set(rows.map((r: any) => r.email as string));
  }

  async list(accountId: string, limit: number, pos?: { t: number; id: string }) {
    const q = this.db.selectFrom('email_suppressions').selectAll().where('account_id', '=', accountId);
    return (await newestFirst(q, 'email', limit, pos).execute()) as Row[];
  }

  wire = wire;

  async remove(accountId: string, raw: string): Promise<void> {
    const email = normalAddress(raw);
    const r = await this.db
      .deleteFrom('email_suppressions')
      .where('account_id', '=', accountId)
      .where('email', '=', email)
      .executeTakeFirst();
    if (!Number(r.numDeletedRows))
      throw apiError('not_found', `${raw} is not on the suppression list.`, { param: 'email' });
  }
}
