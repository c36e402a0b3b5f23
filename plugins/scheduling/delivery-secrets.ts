import type { Kysely, Migration } from 'kysely';
import { deriveKey, open, seal, migrateModule, type DialectName } from '../../core/kit/area.js';

/** What a caller handed over for one delivery to authenticate to its receiver. */
export interface DeliveryCredentials {
  secret?: string;
  headers?: Record<string, string>;
}

export interface StoredCredentials {
  delivery_id: string;
  account_id: string;
  secret: string | null;
  headers: string | null;
}

type DeliveryRef = Pick<StoredCredentials, 'account_id' | 'delivery_id'>;

const SEALED = /^v1\./;

/**
 * A delivery's own `secret` and `headers` (often an Authorization for the receiver) are sealed
 * at rest like the account's signing secrets: AES-256-GCM under a key of their own derived
 * from the master key, bound to the delivery and the column, so a copy of the database (or a
 * backup) holds neither, and a sealed value cannot be moved to another row.
 */
export class DeliverySecrets {
  private readonly key: Buffer;

  constructor(masterKey: Buffer) {
    this.key = deriveKey(masterKey, 'svc-gateway webhook salt v1', 'webhook delivery credentials v1');
  }

  private aad(row: DeliveryRef, column: 'secret' | 'headers'): string {
    return `${row.account_id}|${row.delivery_id}|${column}`;
  }

  /** The two columns as stored: sealed, or null when the caller gave none. */
  seal(row: DeliveryRef, c: DeliveryCredentials): { secret: string | null; headers: string | null } {
    return {
      secret: c.secret === undefined ? null : seal(this.key, c.secret, this.aad(row, 'secret')),
      headers: c.headers === undefined ? null : seal(this.key, JSON.stringify(c.headers), this.aad(row, 'headers')),
    };
  }

  /**
   * A stored row's credentials. A value written before sealing (by a node of an older version
   * during a rolling upgrade) is read as it is: a whsec_ secret or a JSON object never starts
   * with `v1.`, so the two cannot be confused; the start-up migration seals such rows.
   */
  open(row: StoredCredentials): DeliveryCredentials {
    const read = (v: string | null, column: 'secret' | 'headers') =>
      v === null ? undefined : SEALED.test(v) ? open(this.key, v, this.aad(row, column)) : v;
    const headers = read(row.headers, 'headers');
    return { secret: read(row.secret, 'secret'), headers: headers === undefined ? undefined : JSON.parse(headers) };
  }

  /**
   * Seals the rows stored in plaintext before this version, once (recorded like any other
   * migration). It needs the master key, which plain migrations (run by `migrate` too) do not
   * have, so it runs when the area starts, before the first delivery job.
   */
  async sealPlaintextRows(db: Kysely<any>, dialect: DialectName): Promise<number> {
    let sealedRows = 0;
    const migration: Migration = {
      up: async (trx: Kysely<any>) => {
        const rows: StoredCredentials[] = await trx
          .selectFrom('webhook_deliveries')
          .select(['delivery_id', 'account_id', 'secret', 'headers'])
          .where((eb) =>
            eb.or([
              eb.and([eb('secret', 'is not', null), eb('secret', 'not like', 'v1.%')]),
              eb.and([eb('headers', 'is not', null), eb('headers', 'not like', 'v1.%')]),
            ])
          )
          .execute();
        sealedRows = rows.length;
        for (const r of rows) {
          const sealed = this.seal(r, this.open(r));
          await trx.updateTable('webhook_deliveries').set(sealed).where('delivery_id', '=', r.delivery_id).execute();
        }
      },
    };
    const database = { db, dialect, close: async () => undefined };
    await migrateModule(database, 'scheduling-sealed', { '0001_seal_delivery_credentials': migration });
    // A fresh data dir runs the migration over no rows: nothing was sealed, so nothing is said.
    return sealedRows;
  }
}
