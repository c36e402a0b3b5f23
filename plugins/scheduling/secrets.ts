import type { Kysely } from 'kysely';
import { newId, deriveKey, open, seal } from '../../core/kit/area.js';
import { newWebhookSecret } from './signing.js';

interface SecretRow {
  secret_id: string;
  secret: string;
  created_at: number;
  expires_at: number | null;
}

/**
 * Each account's webhook signing secrets: one current (no expiry) and, after a rotation,
 * the previous ones until their grace period ends. Made on first use. Reads are cached for
 * a moment (deliveries run by the thousand); a rotation keeps the old secret valid for its
 * grace period, so a node signing from a cache a second old is still verifiable.
 */
export class WebhookSecrets {
  private readonly cache = new Map<string, { rows: SecretRow[]; until: number }>();

  // Secrets are sealed at rest (AES-256-GCM under a key derived from the master key, bound to
  // the row): a copy of the database alone cannot forge deliveries.
  private readonly key: Buffer;

  constructor(
    private readonly db: Kysely<any>,
    masterKey: Buffer,
    private readonly cacheMs = 1000
  ) {
    this.key = deriveKey(masterKey, 'svc-gateway webhook salt v1', 'webhook signing secrets v1');
  }

  private sealed(row: SecretRow & { account_id: string }) {
    return { ...row, secret: seal(this.key, row.secret, `${row.account_id}|${row.secret_id}`) };
  }

  private async rows(accountId: string, now = Date.now()): Promise<SecretRow[]> {
    const rows = await this.db
      .selectFrom('webhook_secrets')
      .select(['secret_id', 'secret', 'created_at', 'expires_at'])
      .where('account_id', '=', accountId)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .orderBy('created_at', 'desc')
      .orderBy('secret_id', 'desc')
      .execute();
    return (rows as SecretRow[]).map((r) => ({
      ...r,
      secret: open(this.key, r.secret, `${accountId}|${r.secret_id}`),
    }));
  }

  /** The current secret and those still in their grace period, newest first; creates the first one. */
  async active(accountId: string): Promise<SecretRow[]> {
    const now = Date.now();
    const hit = this.cache.get(accountId);
    if (hit && hit.until > now) return hit.rows;
    let rows = await this.rows(accountId, now);
    if (!rows.some((r) => r.expires_at === null)) {
      // A fixed id for the first secret: two nodes creating it at once make one row.
      await this.db
        .insertInto('webhook_secrets')
        .values(
          this.sealed({
            secret_id: `whs_first_${accountId}`,
            account_id: accountId,
            secret: newWebhookSecret(),
            created_at: now,
            expires_at: null,
          })
        )
        .onConflict((oc) => oc.doNothing())
        .execute();
      rows = await this.rows(accountId, now);
    }
    this.cache.set(accountId, { rows, until: now + this.cacheMs });
    return rows;
  }

  async signingSecrets(accountId: string): Promise<string[]> {
    return (await this.active(accountId)).map((r) => r.secret);
  }

  /** A new current secret; the old one signs alongside it until `graceSeconds` from now. */
  async rotate(accountId: string, graceSeconds: number): Promise<{ current: SecretRow; oldExpiresAt: number }> {
    await this.active(accountId);
    const now = Date.now();
    const oldExpiresAt = now + graceSeconds * 1000;
    const current: SecretRow = {
      secret_id: newId('whs'),
      secret: newWebhookSecret(),
      created_at: now,
      expires_at: null,
    };
    await this.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('webhook_secrets')
        .set({ expires_at: oldExpiresAt })
        .where('account_id', '=', accountId)
        .where('expires_at', 'is', null)
        .execute();
      await trx
        .insertInto('webhook_secrets')
        .values(this.sealed({ ...current, account_id: accountId }))
        .execute();
    });
    this.cache.delete(accountId);
    return { current, oldExpiresAt };
  }
}
