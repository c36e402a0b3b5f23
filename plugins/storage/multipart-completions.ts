import type { Kysely } from 'kysely';

/** A completed upload as its completion named it: enough to answer the same completion again. */
export interface Completion {
  etag: string;
  parts: string;
}

/** The listed parts in one comparable form: numbers and unquoted ETags, in order. */
export function partsKey(listed: Array<{ n: number; etag: string }>): string {
  return listed.map((l) => `${l.n}:${l.etag.replace(/^"|"$/g, '')}`).join(',');
}

/**
 * Uploads completed within `multipart_expire_seconds`. An SDK whose CompleteMultipartUpload
 * response was lost sends it again; S3 answers the retry 200 with the object's ETag, and an
 * answer of NoSuchUpload would make the client report a failed upload that succeeded. The
 * expiry sweep forgets them with the unfinished uploads.
 */
export class MultipartCompletions {
  constructor(private readonly db: () => Kysely<any>) {}

  async record(
    upload: { upload_id: string; bucket_id: string; key: string },
    parts: string,
    etag: string,
    now = Date.now()
  ): Promise<void> {
    await this.db()
      .insertInto('storage_multipart_completed')
      .values({
        upload_id: upload.upload_id,
        bucket_id: upload.bucket_id,
        key: upload.key,
        parts,
        etag,
        completed_at: now,
      })
      .onConflict((oc) => oc.column('upload_id').doNothing())
      .execute();
  }

  /** The completion of this upload of this bucket's key, if it is recent enough to remember. */
  async find(bucketId: string, key: string, uploadId: string, since: number): Promise<Completion | undefined> {
    return this.db()
      .selectFrom('storage_multipart_completed')
      .select(['etag', 'parts'])
      .where('upload_id', '=', uploadId)
      .where('bucket_id', '=', bucketId)
      .where('key', '=', key)
      .where('completed_at', '>', since)
      .executeTakeFirst();
  }

  /** Forget completions older than `before`; how many. */
  async forgetOlder(before: number): Promise<number> {
    const res = await this.db()
      .deleteFrom('storage_multipart_completed')
      .where('completed_at', '<=', before)
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }

  /** Forget a deleted bucket's completions (a bucket of the same name later is another bucket). */
  async forgetBucket(bucketId: string): Promise<void> {
    await this.db().deleteFrom('storage_multipart_completed').where('bucket_id', '=', bucketId).execute();
  }
}
