import { Readable } from 'node:stream';
import type { Transaction } from 'kysely';
import {
  presignedExpiry,
  signedUntil,
  type Svc,
  apiError,
  newId,
  type CallOptions,
  type ByteRange,
  type ConditionFailed,
  type GetResult,
  type ListOutput,
  type ObjectInfo,
  type PresignInput,
  type PresignOutput,
  type PutInput,
  type PutOutput,
  type WriteCondition,
  bucketNameProblem,
  keyProblem,
  formatBytes,
  PUBLIC_RESULTS_BUCKET,
  RESULTS_BUCKET,
  presignUrl,
  responseQuery,
  fieldError,
} from '../../core/kit/area.js';
import type { StorageConfig } from './config.js';
import type { CredentialStore } from './credentials.js';
import { UsageMeter } from './usage.js';
import { Multipart, UPLOADS_BUCKET } from './multipart.js';
import { BucketRecords } from './bucket-records.js';
import type { BucketRow } from './bucket-row.js';

// Re-exported: the routes and handlers take the row from the service that returns it.
export type { BucketRow };

/** A put of bytes in memory whose `body` stream is made only if a vendor reads it. */
/** A conditional write's condition did not hold: nothing was written. */
export class WriteConditionFailed extends Error {
  constructor(
    readonly reason: ConditionFailed['precondition_failed'],
    readonly key: string
  ) {
    super(`write condition failed: ${reason}`);
    this.name = 'WriteConditionFailed';
  }
}

class BufferedPut implements PutInput {
  private stream?: Readable;
  condition?: WriteCondition;
  constructor(
    readonly account: string,
    readonly bucket: string,
    readonly key: string,
    readonly data: Buffer,
    readonly content_type: string,
    readonly content_length: number,
    readonly etag?: string
  ) {}

  get body(): Readable {
    return (this.stream ??= Readable.from(this.data.length ? [this.data] : []));
  }
}

export function checkKey(key: string, param = 'key'): void {
  const problem = keyProblem(key);
  if (problem) throw fieldError(param, problem);
}

/**
 * Buckets and objects of an account, whoever asks (the JSON API, the S3 endpoint, the
 * result store). Bucket records live in the database; the bytes live with the vendor that
 * the bucket was created on, reached only through the router.
 */
export class StorageService {
  readonly usage: UsageMeter;
  readonly multipart = new Multipart(this);
  private readonly buckets: BucketRecords;

  constructor(
    readonly svc: Svc,
    readonly config: StorageConfig,
    readonly credentials: CredentialStore
  ) {
    this.usage = new UsageMeter(svc.db, config);
    this.buckets = new BucketRecords(svc.db, config.region);
  }

  /** Base URL of the gateway's S3 endpoint. */
  get endpoint(): string {
    return this.svc.config.server.public_url + this.config.s3_path;
  }

  private opts(b: BucketRow, extra: Partial<CallOptions> = {}): CallOptions {
    return { accountId: b.account_id, vendor: b.vendor, charge: false, ...extra };
  }

  /** Create a bucket and record it. */
  async createBucket(
    accountId: string,
    name: string,
    o: { vendor?: string; region?: string; acl?: 'private' | 'public' } = {}
  ): Promise<BucketRow> {
    const b = await this.openBucket(accountId, name, o);
    await this.recordBucket(b);
    return b;
  }

  /**
   * Check the name and create the bucket at its vendor; the row to record is returned, not
   * written (recordBucket). The vendor's bucket is named by the account and the name alone, and
   * creating one that exists is a no-op there, so a retry that runs this again after a crash
   * before the record makes nothing twice.
   */
  async openBucket(
    accountId: string,
    name: string,
    o: { vendor?: string; region?: string; acl?: 'private' | 'public' } = {}
  ): Promise<BucketRow> {
    const problem =
      name === RESULTS_BUCKET || name === PUBLIC_RESULTS_BUCKET
        ? 'is reserved for the results the gateway hands out'
        : name === UPLOADS_BUCKET
          ? 'is reserved for the parts of multipart uploads'
          : bucketNameProblem(name);
    if (problem) throw fieldError('bucket', problem);
    if (await this.findBucket(accountId, name))
      throw apiError('already_exists', `This account already has a bucket named "${name}".`, { param: 'bucket' });
    const res = await this.svc.router.call<unknown, { region: string }>(
      'storage.bucket.create',
      { account: accountId, bucket: name, region: o.region },
      { accountId, vendor: o.vendor, charge: false }
    );
    const b: BucketRow = {
      bucket_id: newId('bkt'),
      account_id: accountId,
      name,
      vendor: res.vendor,
      region: o.region ?? res.output.region,
      acl: o.acl ?? 'private',
      created_at: Date.now(),
    };
    return b;
  }

  /** Write a bucket's row (on `trx`: with the route's idempotent answer); 409 already_exists for a taken name. */
  recordBucket(b: BucketRow, trx?: Transaction<any>): Promise<void> {
    return this.buckets.insert(b, trx);
  }

  findBucket(accountId: string, name: string): Promise<BucketRow | undefined> {
    return this.buckets.find(accountId, name);
  }

  /** The bucket with this id, uncached (for background work that holds ids, not names). */
  bucketById(bucketId: string): Promise<BucketRow | undefined> {
    return this.buckets.byId(bucketId);
  }

  /** The read-only bucket a result's URL reads from (bucket-records.ts); undefined once it is gone. */
  resultsBucket(accountId: string, key: string, bucket = RESULTS_BUCKET): Promise<BucketRow | undefined> {
    return this.buckets.results(accountId, key, bucket);
  }

  /** The bucket, or 404 (also for another account's bucket of the same name). */
  async requireBucket(accountId: string, name: string): Promise<BucketRow> {
    const b = await this.findBucket(accountId, name);
    if (!b) throw apiError('not_found', `No bucket "${name}" in this account.`, { param: 'bucket' });
    return b;
  }

  listBuckets(accountId: string, limit: number, before?: { t: number; id: string }): Promise<BucketRow[]> {
    return this.buckets.list(accountId, limit, before);
  }

  /** Delete an empty bucket; false when it still has objects. */
  async deleteBucket(b: BucketRow): Promise<boolean> {
    const res = await this.svc.router.call<unknown, { deleted: boolean }>(
      'storage.bucket.delete',
      { account: b.account_id, bucket: b.name },
      this.opts(b)
    );
    if (!res.output.deleted) return false;
    await this.buckets.delete(b);
    // Unfinished multipart uploads go with the bucket, as in S3 (their parts are stored bytes).
    await this.multipart.dropAll(b);
    return true;
  }

  /**
   * How many bytes a put of `key` may carry: the tier's object cap, or what is left of its
   * total cap (counting the object it replaces), whichever is smaller, named for the 413.
   * The object is only looked at when the account is near its total cap.
   */
  async uploadCap(b: BucketRow, key: string): Promise<{ bytes: number; what: string }> {
    const { caps, stored } = await this.usage.limits(b.account_id);
    const objectCap = {
      bytes: caps.maxObjectBytes,
      what: `the ${caps.tier} tier's object size cap of ${formatBytes(caps.maxObjectBytes)}`,
    };
    if (caps.maxTotalBytes === undefined || stored + caps.maxObjectBytes <= caps.maxTotalBytes) return objectCap;
    const previousSize = (await this.head(b, key))?.size ?? 0;
    const room = Math.max(0, caps.maxTotalBytes - stored + previousSize);
    if (room >= caps.maxObjectBytes) return objectCap;
    return {
      bytes: room,
      what: `the ${caps.tier} tier's storage cap of ${formatBytes(caps.maxTotalBytes)} (${formatBytes(room)} left)`,
    };
  }

  /**
   * Store an object from a stream, or from a Buffer (a small body read whole: no stream is made
   * unless the vendor wants one). With a `condition`, the bucket's vendor must check it
   * atomically (`conditionalWrites`); one that fails throws WriteConditionFailed, nothing stored.
   */
  async put(
    b: BucketRow,
    key: string,
    body: Readable | Buffer,
    contentType: string,
    o: { signal?: AbortSignal; length?: number; etag?: string; condition?: WriteCondition } = {}
  ): Promise<ObjectInfo> {
    const input: PutInput & { condition?: WriteCondition } = Buffer.isBuffer(body)
      ? new BufferedPut(b.account_id, b.name, key, body, contentType, body.length, o.etag)
      : {
          account: b.account_id,
          bucket: b.name,
          key,
          body,
          content_type: contentType,
          content_length: o.length,
          etag: o.etag,
        };
    if (o.condition) input.condition = o.condition;
    const res = await this.svc.router.call<unknown, PutOutput | ConditionFailed>(
      o.condition ? 'storage.object.put_if' : 'storage.object.put',
      input,
      this.opts(b, { signal: o.signal, timeoutMs: this.config.transfer_timeout_ms })
    );
    const out = res.output;
    if ('precondition_failed' in out) throw new WriteConditionFailed(out.precondition_failed, key);
    this.usage.stored(b.account_id, out.size - (out.replaced_size ?? 0));
    return out;
  }

  /** Whether the bucket's vendor checks write conditions atomically (offers the `*_if` capabilities). */
  conditionalWrites(b: BucketRow): boolean {
    try {
      return (
        this.svc.router.candidates('storage.object.put_if', { vendor: b.vendor }).length > 0
        && this.svc.router.candidates('storage.object.delete_if', { vendor: b.vendor }).length > 0
      );
    } catch {
      return false; // the pinned vendor serves neither
    }
  }

  async get(b: BucketRow, key: string, range?: ByteRange, signal?: AbortSignal): Promise<GetResult> {
    const res = await this.svc.router.call<unknown, GetResult>(
      'storage.object.get',
      { account: b.account_id, bucket: b.name, key, range },
      this.opts(b, { signal })
    );
    return res.output;
  }

  async head(b: BucketRow, key: string): Promise<ObjectInfo | null> {
    return (
      await this.svc.router.call<unknown, ObjectInfo | null>(
        'storage.object.head',
        { account: b.account_id, bucket: b.name, key },
        this.opts(b)
      )
    ).output;
  }

  async deleteObject(b: BucketRow, key: string, condition?: { if_match: string[] }): Promise<boolean> {
    const old = await this.head(b, key);
    const ref = { account: b.account_id, bucket: b.name, key, ...(condition ? { condition } : {}) };
    const out = (
      await this.svc.router.call<unknown, { deleted: boolean } | ConditionFailed>(
        condition ? 'storage.object.delete_if' : 'storage.object.delete',
        ref,
        this.opts(b)
      )
    ).output;
    if ('precondition_failed' in out) throw new WriteConditionFailed(out.precondition_failed, key);
    if (out.deleted && old) this.usage.stored(b.account_id, -old.size);
    return out.deleted;
  }

  async list(
    b: BucketRow,
    q: { prefix: string; delimiter?: string; after?: string; limit: number }
  ): Promise<ListOutput> {
    return (
      await this.svc.router.call<unknown, ListOutput>(
        'storage.object.list',
        { account: b.account_id, bucket: b.name, ...q },
        this.opts(b)
      )
    ).output;
  }

  /**
   * A URL on the gateway's own endpoint, whatever vendor holds the bucket, signed with the
   * account's internal key: the endpoint caps and meters what passes, and reads results
   * through the vendor they were written to.
   */
  async gatewayUrl(
    accountId: string,
    bucket: string,
    key: string,
    method: 'GET' | 'PUT',
    expiresSeconds: number,
    response?: PresignInput['response']
  ): Promise<string> {
    const cred = await this.credentials.internal(accountId);
    return presignUrl({
      method,
      endpoint: this.endpoint,
      bucket,
      key,
      region: this.config.region,
      accessKeyId: cred.accessKeyId,
      secret: cred.secret,
      expiresSeconds,
      query: responseQuery(response),
    });
  }

  /**
   * A presigned URL and when it expires: the URL's own X-Amz-Date (whole seconds) plus its
   * lifetime, so `expires_at` is never after the moment the URL stops working. A vendor URL
   * without those parameters gets the whole second before the call plus the lifetime.
   */
  async presign(
    b: BucketRow,
    key: string,
    method: 'GET' | 'PUT',
    expiresSeconds: number,
    response?: PresignInput['response']
  ): Promise<PresignOutput & { expiresAt: number }> {
    const fallback = signedUntil(expiresSeconds);
    const expiring = (out: PresignOutput) => ({ ...out, expiresAt: presignedExpiry(out.url) ?? fallback });
    // SigV4 cannot cap a PUT that goes straight to S3: through the gateway it is capped and metered as it streams.
    if (this.config.presign_through === 'gateway')
      return expiring({ url: await this.gatewayUrl(b.account_id, b.name, key, method, expiresSeconds, response) });
    const cred = await this.credentials.internal(b.account_id);
    const res = await this.svc.router.call<unknown, PresignOutput>(
      'storage.object.presign',
      {
        account: b.account_id,
        bucket: b.name,
        key,
        method,
        expires_seconds: expiresSeconds,
        response,
        signer: {
          endpoint: this.endpoint,
          region: this.config.region,
          access_key_id: cred.accessKeyId,
          secret: cred.secret,
        },
      },
      this.opts(b)
    );
    return expiring(res.output);
  }
}
