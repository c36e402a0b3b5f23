import type { Kysely, Transaction } from 'kysely';
import { isUniqueViolation, apiError, PUBLIC_RESULTS_BUCKET, newestFirst } from '../../core/kit/area.js';
import type { BucketRow } from './bucket-row.js';

const BUCKET_CACHE_MS = 5000;

function row(r: any): BucketRow {
  return { ...r, created_at: Number(r.created_at) };
}

/**
 * The gateway's records of buckets (`storage_buckets`), and the read-only bucket a result's
 * URL is served from. The bytes are the vendor's: the service calls it, then writes here.
 */
export class BucketRecords {
  /**
   * Buckets found recently: every S3 request looks its bucket up, and bucket rows never
   * change (only appear and go). Only hits are kept, so a new bucket is seen at once; a
   * bucket deleted through another gateway node may be seen for BUCKET_CACHE_MS more.
   */
  private readonly cache = new Map<string, { bucket: BucketRow; until: number }>();

  constructor(
    private readonly db: Kysely<any>,
    private readonly region: string
  ) {}

  async insert(b: BucketRow, trx?: Transaction<any>): Promise<void> {
    try {
      await (trx ?? this.db).insertInto('storage_buckets').values(b).execute();
    } catch (e) {
      if (isUniqueViolation(e))
        throw apiError('already_exists', `This account already has a bucket named "${b.name}".`, { param: 'bucket' });
      throw e;
    }
  }

  async find(accountId: string, name: string): Promise<BucketRow | undefined> {
    const id = `${accountId}/${name}`;
    const now = Date.now();
    const hit = this.cache.get(id);
    if (hit && hit.until > now) return hit.bucket;
    const r = await this.db
      .selectFrom('storage_buckets')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('name', '=', name)
      .executeTakeFirst();
    if (!r) return undefined;
    if (this.cache.size >= 10_000) this.cache.clear();
    this.cache.set(id, { bucket: row(r), until: now + BUCKET_CACHE_MS });
    return row(r);
  }

  /** The bucket with this id, uncached (for background work that holds ids, not names). */
  async byId(bucketId: string): Promise<BucketRow | undefined> {
    const r = await this.db
      .selectFrom('storage_buckets')
      .selectAll()
      .where('bucket_id', '=', bucketId)
      .executeTakeFirst();
    return r && row(r);
  }

  /**
   * The read-only view of the account's results (core/results) that their URLs use: the
   * vendor is the one the result was written to; gone once retention deleted it. In the
   * public results bucket it is public (unsigned GETs), and only for results saved there.
   */
  async results(accountId: string, key: string, bucket: string): Promise<BucketRow | undefined> {
    const resultId = key.split('/')[0];
    const r = await this.db
      .selectFrom('results')
      .select(['vendor', 'bucket', 'content_disposition', 'created_at', 'delete_at'])
      .where('result_id', '=', resultId)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    if (!r || r.bucket !== bucket || Number(r.delete_at) <= Date.now()) return undefined;
    return {
      bucket_id: resultId,
      account_id: accountId,
      name: bucket,
      vendor: r.vendor,
      region: this.region,
      created_at: Number(r.created_at),
      acl: bucket === PUBLIC_RESULTS_BUCKET ? 'public' : 'private',
      content_disposition: r.content_disposition ?? undefined,
    };
  }

  async list(accountId: string, limit: number, before?: { t: number; id: string }): Promise<BucketRow[]> {
    const q = this.db.selectFrom('storage_buckets').selectAll().where('account_id', '=', accountId);
    const rows = await newestFirst(q, 'bucket_id', limit, before).execute();
    return rows.map(row);
  }

  /** The bucket's row and its CORS rules. */
  async delete(b: BucketRow): Promise<void> {
    this.cache.delete(`${b.account_id}/${b.name}`);
    await this.db.deleteFrom('storage_buckets').where('bucket_id', '=', b.bucket_id).execute();
    await this.db.deleteFrom('storage_bucket_cors').where('bucket_id', '=', b.bucket_id).execute();
  }
}
