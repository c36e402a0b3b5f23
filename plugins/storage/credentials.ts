import { randomInt } from 'node:crypto';
import {
  deriveKey,
  open,
  seal,
  base62,
  apiError,
  isUniqueViolation,
  type CursorPos,
  newestFirst,
} from '../../core/kit/area.js';
import type { Kysely, Transaction } from 'kysely';

export interface Credential {
  accessKeyId: string;
  accountId: string;
  secret: string;
}

export interface CredentialRow {
  access_key_id: string;
  label: string;
  created_at: number;
}

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** 20 characters, upper case, like AWS access key ids (some tools check the shape). */
function newAccessKeyId(): string {
  let s = 'SVC';
  for (let i = 0; i < 17; i++) s += UPPER[randomInt(UPPER.length)];
  return s;
}

/**
 * Per-account S3 credentials. SigV4 verification needs the secret itself, so secrets are
 * stored encrypted with AES-256-GCM under a key derived (HKDF-SHA256) from the master key,
 * with the access key id as associated data so a ciphertext cannot be moved to another row.
 * Lookups are cached briefly because every S3 request does one; a revoke drops the entry.
 */
export class CredentialStore {
  private readonly key: Buffer;
  private readonly cache = new Map<string, { cred: Credential | null; until: number }>();
  private readonly ttlMs = 30_000;
  /**
   * Each account's internal credential, once read: every result URL is signed with it (a
   * select and an AES-GCM open, ~0.2 ms of an image call), and it is never revoked or changed.
   */
  private readonly internals = new Map<string, Credential>();

  constructor(
    private readonly db: Kysely<any>,
    masterKey: Buffer
  ) {
    this.key = deriveKey(masterKey, '', 'svc-gateway storage credentials');
  }

  /** A new credential; given `trx`, its row joins it (the route commits it with its idempotent answer). */
  async create(
    accountId: string,
    kind: 'user' | 'internal',
    label: string,
    trx?: Transaction<any>
  ): Promise<Credential & { createdAt: number }> {
    const accessKeyId = newAccessKeyId();
    const secret = base62(40);
    const createdAt = Date.now();
    await (trx ?? this.db)
      .insertInto('storage_credentials')
      .values({
        access_key_id: accessKeyId,
        account_id: accountId,
        kind,
        label,
        secret_enc: seal(this.key, secret, accessKeyId),
        created_at: createdAt,
        revoked_at: null,
      })
      .execute();
    return { accessKeyId, accountId, secret, createdAt };
  }

  /** The credential the API signs presigned URLs with: one per account, made on first use. */
  async internal(accountId: string): Promise<Credential> {
    const known = this.internals.get(accountId);
    if (known) return known;
    const cred = await this.readInternal(accountId);
    if (this.internals.size >= 10_000) this.internals.clear();
    this.internals.set(accountId, cred);
    return cred;
  }

  private async readInternal(accountId: string): Promise<Credential> {
    for (let i = 0; i < 2; i++) {
      const row = await this.db
        .selectFrom('storage_credentials')
        .select(['access_key_id', 'secret_enc'])
        .where('account_id', '=', accountId)
        .where('kind', '=', 'internal')
        .where('revoked_at', 'is', null)
        .orderBy('created_at')
        .executeTakeFirst();
      if (row)
        return { accessKeyId: row.access_key_id, accountId, secret: open(this.key, row.secret_enc, row.access_key_id) };
      if (i === 0) {
        try {
          await this.create(accountId, 'internal', 'presigned URLs');
        } catch (e) {
          if (!isUniqueViolation(e)) throw e;
        }
      }
    }
    throw new Error('could not create the internal storage credential');
  }

  /** An active credential by access key id, or null. */
  async lookup(accessKeyId: string): Promise<Credential | null> {
    if (!/^[A-Z0-9]{16,128}$/.test(accessKeyId)) return null;
    const now = Date.now();
    const hit = this.cache.get(accessKeyId);
    if (hit && hit.until > now) return hit.cred;
    const row = await this.db
      .selectFrom('storage_credentials')
      .select(['account_id', 'secret_enc', 'revoked_at'])
      .where('access_key_id', '=', accessKeyId)
      .executeTakeFirst();
    const cred =
      row && row.revoked_at === null
        ? { accessKeyId, accountId: row.account_id, secret: open(this.key, row.secret_enc, accessKeyId) }
        : null;
    if (this.cache.size >= 10_000) this.cache.clear();
    this.cache.set(accessKeyId, { cred, until: now + this.ttlMs });
    return cred;
  }

  /** Active user credentials, newest first, `limit` of them after the cursor position `before`. */
  async list(accountId: string, limit: number, before?: CursorPos): Promise<CredentialRow[]> {
    const q = this.db
      .selectFrom('storage_credentials')
      .select(['access_key_id', 'label', 'created_at'])
      .where('account_id', '=', accountId)
      .where('kind', '=', 'user')
      .where('revoked_at', 'is', null);
    const rows = await newestFirst(q, 'access_key_id', limit, before).execute();
    return rows.map((r) => ({ ...r, created_at: Number(r.created_at) }));
  }

  async revoke(accountId: string, accessKeyId: string): Promise<void> {
    const res = await this.db
      .updateTable('storage_credentials')
      .set({ revoked_at: Date.now() })
      .where('access_key_id', '=', accessKeyId)
      .where('account_id', '=', accountId)
      .where('kind', '=', 'user')
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) !== 1)
      throw apiError('not_found', `No S3 credential ${accessKeyId} in this account.`, { param: 'access_key_id' });
    this.cache.delete(accessKeyId);
  }
}
