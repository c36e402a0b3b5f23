import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  newId,
  type ByteRange,
  type GetResult,
  type ObjectInfo,
  type WriteCondition,
  type Svc,
  formatBytes,
} from '../../core/kit/area.js';
import type { BucketRow } from './bucket-row.js';
import type { StorageConfig } from './config.js';
import type { UsageMeter } from './usage.js';
import { MultipartCompletions, partsKey, type Completion } from './multipart-completions.js';

/** The hidden bucket, on each vendor, holding the parts of multipart uploads until they complete. */
export const UPLOADS_BUCKET = 'svc-uploads';
export const MIN_PART_BYTES = 5 * 1024 * 1024;
export const MAX_PARTS = 10_000;
/**
 * How long a node that claimed an upload (to drop or complete it) has before another may take
 * it again: an upload of 10,000 parts on a remote vendor takes minutes; a failed drop waits this long.
 */
export const CLAIM_MS = 3_600_000;

/** S3's message for an upload that is not (or no longer) there. */
export const NO_SUCH_UPLOAD =
  'The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.';

export interface UploadRow {
  upload_id: string;
  account_id: string;
  bucket_id: string;
  key: string;
  content_type: string;
  created_at: number;
}

export interface PartRow {
  part_number: number;
  etag: string;
  size: number;
  created_at: number;
}

/** Why a completion was refused, for the S3 layer to name (S3's own error codes). */
export class CompleteProblem extends Error {
  constructor(
    readonly code: 'InvalidPart' | 'InvalidPartOrder' | 'EntityTooSmall' | 'EntityTooLarge' | 'NoSuchUpload',
    message: string,
    readonly extra: Record<string, string> = {}
  ) {
    super(message);
  }
}

const unquote = (etag: string) => etag.replace(/^"|"$/g, '');

/** S3's ETag of a multipart object: the MD5 of the parts' binary MD5s, then "-" and the part count. */
export function multipartEtag(partEtags: string[]): string {
  const md5 = createHash('md5');
  for (const e of partEtags) md5.update(Buffer.from(unquote(e), 'hex'));
  return `"${md5.digest('hex')}-${partEtags.length}"`;
}

/**
 * Multipart uploads on any storage vendor. Each part is an ordinary object in the hidden
 * UPLOADS_BUCKET on the target bucket's vendor (so parts are capped and metered as stored
 * bytes like any put); completing streams the parts, in order, into the target object and
 * then deletes them. Uploads and parts are rows, so any gateway node can complete them.
 */
/**
 * What the uploads need of the storage service (which holds them): written out rather than
 * imported so that the service and its uploads do not import each other.
 */
export interface PartStore {
  readonly svc: Pick<Svc, 'db'>;
  readonly config: Pick<StorageConfig, 'multipart_expire_seconds'>;
  readonly usage: Pick<UsageMeter, 'limits'>;
  uploadCap(b: BucketRow, key: string): Promise<{ bytes: number; what: string }>;
  put(
    b: BucketRow,
    key: string,
    body: Readable,
    contentType: string,
    o?: { signal?: AbortSignal; length?: number; etag?: string; condition?: WriteCondition }
  ): Promise<ObjectInfo>;
  get(b: BucketRow, key: string, range?: ByteRange, signal?: AbortSignal): Promise<GetResult>;
  deleteObject(b: BucketRow, key: string): Promise<boolean>;
}

export class Multipart {
  readonly completions: MultipartCompletions;

  constructor(private readonly storage: PartStore) {
    this.completions = new MultipartCompletions(() => this.db);
  }

  private get db() {
    return this.storage.svc.db;
  }

  private partsBucket(b: BucketRow): BucketRow {
    return { ...b, name: UPLOADS_BUCKET, acl: 'private' };
  }

  async create(b: BucketRow, key: string, contentType: string): Promise<string> {
    const upload: UploadRow = {
      upload_id: newId('mpu'),
      account_id: b.account_id,
      bucket_id: b.bucket_id,
      key,
      content_type: contentType,
      created_at: Date.now(),
    };
    await this.db.insertInto('storage_multipart_uploads').values(upload).execute();
    return upload.upload_id;
  }

  /**
   * The upload, if it is this bucket's and this key's (anything else is "no such upload").
   * An expired upload, or one claimed by an abort, a completion or the sweep, is no such
   * upload even before it is dropped, so that nobody adds to or completes an upload whose
   * parts may be being deleted.
   */
  async find(b: BucketRow, key: string, uploadId: string): Promise<UploadRow | undefined> {
    const r = await this.db
      .selectFrom('storage_multipart_uploads')
      .selectAll()
      .where('upload_id', '=', uploadId)
      .where('bucket_id', '=', b.bucket_id)
      .where('key', '=', key)
      .where('expiry_claimed_at', 'is', null)
      .where('created_at', '>', Date.now() - this.storage.config.multipart_expire_seconds * 1000)
      .executeTakeFirst();
    return r && { ...(r as UploadRow), created_at: Number(r.created_at) };
  }

  /**
   * Take the upload for dropping or completing, with a conditional update: of two nodes (or
   * two requests) at once, one wins, so its parts are deleted and their bytes counted gone
   * once. A claim older than `staleMs` (its holder died) can be taken again.
   */
  async claim(uploadId: string, now: number, staleMs: number): Promise<boolean> {
    const res = await this.db
      .updateTable('storage_multipart_uploads')
      .set({ expiry_claimed_at: now })
      .where('upload_id', '=', uploadId)
      .where((eb) => eb.or([eb('expiry_claimed_at', 'is', null), eb('expiry_claimed_at', '<', now - staleMs)]))
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  async parts(uploadId: string): Promise<PartRow[]> {
    const rows = await this.db
      .selectFrom('storage_multipart_parts')
      .select(['part_number', 'etag', 'size', 'created_at'])
      .where('upload_id', '=', uploadId)
      .orderBy('part_number')
      .execute();
    return rows.map((r) => ({
      part_number: Number(r.part_number),
      etag: r.etag,
      size: Number(r.size),
      created_at: Number(r.created_at),
    }));
  }

  /** How many bytes part `n` may carry: the object cap less the other parts, and the account's room. */
  async partCap(b: BucketRow, upload: UploadRow, n: number): Promise<{ bytes: number; what: string }> {
    const cap = await this.storage.uploadCap(this.partsBucket(b), `${upload.upload_id}/${n}`);
    const { caps } = await this.storage.usage.limits(b.account_id);
    const others = (await this.parts(upload.upload_id))
      .filter((p) => p.part_number !== n)
      .reduce((s, p) => s + p.size, 0);
    const left = Math.max(0, caps.maxObjectBytes - others);
    if (left >= cap.bytes) return cap;
    return {
      bytes: left,
      what: `the ${caps.tier} tier's object size cap of ${formatBytes(caps.maxObjectBytes)} (the other parts hold ${formatBytes(others)})`,
    };
  }

  async putPart(
    b: BucketRow,
    upload: UploadRow,
    n: number,
    body: Readable,
    o: { signal?: AbortSignal; length?: number }
  ): Promise<ObjectInfo> {
    const info = await this.storage.put(
      this.partsBucket(b),
      `${upload.upload_id}/${n}`,
      body,
      'application/octet-stream',
      o
    );
    const row = {
      upload_id: upload.upload_id,
      part_number: n,
      etag: info.etag,
      size: info.size,
      created_at: Date.now(),
    };
    await this.db
      .insertInto('storage_multipart_parts')
      .values(row)
      .onConflict((oc) =>
        oc
          .columns(['upload_id', 'part_number'])
          .doUpdateSet({ etag: row.etag, size: row.size, created_at: row.created_at })
      )
      .execute();
    return info;
  }

  /** Join the listed parts into the object (S3's checks and ETag), then drop the upload. */
  async complete(
    b: BucketRow,
    upload: UploadRow,
    listed: Array<{ n: number; etag: string }>,
    condition?: WriteCondition
  ): Promise<ObjectInfo> {
    if (!listed.length) throw new CompleteProblem('InvalidPart', 'The upload must name at least one part.');
    const have = new Map((await this.parts(upload.upload_id)).map((p) => [p.part_number, p]));
    const chosen: PartRow[] = [];
    if (listed.some((l, i) => i > 0 && l.n <= listed[i - 1].n))
      throw new CompleteProblem('InvalidPartOrder', 'The list of parts was not in ascending order.');
    for (const [i, l] of listed.entries()) {
      const p = have.get(l.n);
      if (!p || unquote(p.etag) !== unquote(l.etag)) {
        throw new CompleteProblem('InvalidPart', `Part ${l.n} was not uploaded, or its ETag does not match.`, {
          PartNumber: String(l.n),
          ETag: l.etag,
        });
      }
      if (i < listed.length - 1 && p.size < MIN_PART_BYTES) {
        throw new CompleteProblem(
          'EntityTooSmall',
          `Part ${l.n} is smaller than the 5 MiB every part but the last must have.`,
          { PartNumber: String(l.n), MinSizeAllowed: String(MIN_PART_BYTES) }
        );
      }
      chosen.push(p);
    }
    const size = chosen.reduce((s, p) => s + p.size, 0);
    const { caps } = await this.storage.usage.limits(b.account_id);
    if (size > caps.maxObjectBytes) {
      throw new CompleteProblem(
        'EntityTooLarge',
        `Your proposed upload exceeds the ${caps.tier} tier's object size cap of ${formatBytes(caps.maxObjectBytes)}.`,
        { MaxSizeAllowed: String(caps.maxObjectBytes) }
      );
    }
    // Taken once the list checks out: an abort, the sweep or a second completion now finds
    // no such upload. A completion that fails from here gives the upload back for a retry.
    if (!(await this.claim(upload.upload_id, Date.now(), CLAIM_MS))) {
      throw new CompleteProblem('NoSuchUpload', NO_SUCH_UPLOAD, { UploadId: upload.upload_id });
    }
    const parts = this.partsBucket(b);
    const storage = this.storage;
    async function* joined() {
      for (const p of chosen) {
        const got = await storage.get(parts, `${upload.upload_id}/${p.part_number}`);
        if (!got || !('body' in got))
          throw new Error(`part ${p.part_number} of ${upload.upload_id} is missing from the vendor`);
        yield* got.body;
      }
    }
    let info: ObjectInfo;
    try {
      info = await this.storage.put(
        b,
        upload.key,
        Readable.from(joined(), { objectMode: false }),
        upload.content_type,
        { length: size, etag: multipartEtag(chosen.map((p) => p.etag)), condition }
      );
    } catch (e) {
      await this.db
        .updateTable('storage_multipart_uploads')
        .set({ expiry_claimed_at: null })
        .where('upload_id', '=', upload.upload_id)
        .execute();
      throw e;
    }
    await this.completions.record(upload, partsKey(listed), info.etag);
    await this.drop(b, upload);
    return info;
  }

  /**
   * A completion repeated after it succeeded (within the expiry): the first one's answer when
   * it lists the same parts; undefined otherwise (no such upload, as S3 says).
   */
  async completedAgain(
    b: BucketRow,
    key: string,
    uploadId: string,
    listed: Array<{ n: number; etag: string }>
  ): Promise<Completion | undefined> {
    const done = await this.completions.find(
      b.bucket_id,
      key,
      uploadId,
      Date.now() - this.storage.config.multipart_expire_seconds * 1000
    );
    return done && done.parts === partsKey(listed) ? done : undefined;
  }

  /** Drop every upload into a bucket (it is being deleted: nobody could complete or abort them). */
  async dropAll(b: BucketRow): Promise<void> {
    const rows = await this.db
      .selectFrom('storage_multipart_uploads')
      .selectAll()
      .where('bucket_id', '=', b.bucket_id)
      .execute();
    for (const r of rows) await this.drop(b, { ...(r as UploadRow), created_at: Number(r.created_at) });
    await this.completions.forgetBucket(b.bucket_id);
  }

  /**
   * AbortMultipartUpload: claim the upload, then drop it. False when another abort, a
   * completion or the sweep took it first (to the caller it is gone).
   */
  async abort(b: BucketRow, upload: UploadRow): Promise<boolean> {
    if (!(await this.claim(upload.upload_id, Date.now(), CLAIM_MS))) return false;
    await this.drop(b, upload);
    return true;
  }

  /** Delete the upload and every part it received. */
  async drop(b: BucketRow, upload: UploadRow): Promise<void> {
    await this.deleteParts(b, upload.upload_id);
    await this.forget(upload.upload_id);
  }

  /** Delete the parts' objects from `b`'s vendor (a part already gone is no error), keeping the rows. */
  async deleteParts(b: BucketRow, uploadId: string): Promise<void> {
    const parts = this.partsBucket(b);
    for (const p of await this.parts(uploadId)) await this.storage.deleteObject(parts, `${uploadId}/${p.part_number}`);
  }

  /** Delete the upload's rows (its parts' objects are gone, or cannot be found). */
  async forget(uploadId: string): Promise<void> {
    await this.db.deleteFrom('storage_multipart_parts').where('upload_id', '=', uploadId).execute();
    await this.db.deleteFrom('storage_multipart_uploads').where('upload_id', '=', uploadId).execute();
  }
}
