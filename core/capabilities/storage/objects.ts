import type { Readable } from 'node:stream';
import { capabilities, capability } from '../capability.js';

// The capabilities a storage vendor serves, with their inputs and outputs. Buckets are
// per account: a vendor keeps (account, bucket) apart however it lays objects out.
// "Not found" is an ordinary answer (null / false), never a thrown error, so the router
// does not take it for a vendor failure.

export interface BucketRef {
  account: string;
  bucket: string;
}

export interface ObjectRef extends BucketRef {
  key: string;
}

export interface ObjectInfo {
  key: string;
  size: number;
  /** Quoted hex MD5 for single-part puts, as S3 sends it. */
  etag: string;
  content_type: string;
  /** Epoch ms. */
  last_modified: number;
}

export type ByteRange = { start: number; end?: number } | { suffix: number };

export interface PutInput extends ObjectRef {
  /** The object's bytes, streamed; errors on it abort the put and leave the old object. */
  body: Readable;
  /**
   * The same bytes, whole, when the caller already holds them (small uploads): a vendor may
   * take them instead of reading `body`, which is then made only if it is read.
   */
  data?: Buffer;
  content_type: string;
  /** Bytes the body will have, when the request declared it (vendors that need it spool otherwise). */
  content_length?: number;
  /**
   * The ETag to keep instead of the body's MD5: a completed multipart upload's "md5-of-md5s-N".
   * Vendors that cannot set one (a remote S3 computes its own) return theirs.
   */
  etag?: string;
  /**
   * Stored with the object and sent on every GET of it (a result's download name when it is
   * served without a signature). Vendors that keep no such metadata may ignore it.
   */
  content_disposition?: string;
  /**
   * `false`: the put may be answered once the object is committed, before it is synced to disk.
   * The result store asks this: a result's row in the gateway's database is itself committed
   * without a sync (SQLite's synchronous = NORMAL), so a power cut loses both or neither. A
   * crash of the process still loses nothing. Vendors that always sync ignore it.
   */
  durable?: boolean;
}

/**
 * A write's precondition, as S3 conditional writes have it: create only when the key has no
 * object (`If-None-Match: *`), or replace only the object whose ETag is one of `if_match`
 * (`If-Match`; quotes and `W/` already stripped). Only the `*_if` capabilities take one, and a
 * vendor offers them only where it checks the condition atomically with the write.
 */
export type WriteCondition = { if_none_match: '*' } | { if_match: string[] };

/** Why a conditional write was not done: an object was there, none was, or its ETag differs. */
export interface ConditionFailed {
  precondition_failed: 'exists' | 'missing' | 'etag';
}

export interface ConditionalPutInput extends PutInput {
  condition: WriteCondition;
}

export interface ConditionalDeleteInput extends ObjectRef {
  condition: { if_match: string[] };
}

/** Whether a stored ETag is one a condition names (`*` names any). */
export function etagListed(list: string[], etag: string): boolean {
  const bare = etag.replace(/^"|"$/g, '');
  return list.some((e) => e === '*' || e === bare);
}

export interface PutOutput extends ObjectInfo {
  /** Size of the object the put replaced (0 when it was new), for metering. */
  replaced_size: number;
  /**
   * Where the object lives in the vendor's own namespace (its key in the vendor's bucket),
   * for URLs that bypass the gateway: a public bucket or a CDN in front of it.
   */
  path?: string;
}

export interface GetInput extends ObjectRef {
  range?: ByteRange;
}

export interface GetOutput extends ObjectInfo {
  body: Readable;
  /** The bytes served, inclusive; the whole object when no range was asked. */
  start: number;
  end: number;
}

/** A get's answer: the object, a range it cannot serve (416), or no such object. */
export type GetResult = GetOutput | { unsatisfiable: true; size: number } | null;

export interface ListInput extends BucketRef {
  prefix: string;
  delimiter?: string;
  /** List keys after this one (exclusive); a common prefix skips everything under it. */
  after?: string;
  limit: number;
}

/**
 * An object as a listing knows it. S3's ListObjectsV2 carries no content type, so a vendor
 * whose listing does not have it leaves it out rather than guess (a HEAD gives it).
 */
export type ListedObject = Omit<ObjectInfo, 'content_type'> & { content_type?: string };

export interface ListOutput {
  objects: ListedObject[];
  prefixes: string[];
  truncated: boolean;
  /** The last key or common prefix returned: pass it back as `after` for the next page. */
  last?: string;
}

/** Credentials of the gateway's own S3 endpoint, for vendors whose URLs point there. */
export interface EndpointSigner {
  endpoint: string;
  region: string;
  access_key_id: string;
  secret: string;
}

export interface PresignInput extends ObjectRef {
  method: 'GET' | 'PUT';
  expires_seconds: number;
  signer: EndpointSigner;
  /** GET only: headers the response carries (S3's response-content-type, response-content-disposition). */
  response?: { content_type?: string; content_disposition?: string };
}

export interface PresignOutput {
  url: string;
  headers?: Record<string, string>;
}

export interface PresignPostInput extends ObjectRef {
  expires_seconds: number;
  /** Largest file the form may carry: the policy's `content-length-range` is [0, max_bytes], enforced by the vendor. */
  max_bytes: number;
}

/** A browser form upload: POST multipart/form-data to `url` with `fields`, then the `file` field last. */
export interface PresignPostOutput {
  url: string;
  fields: Record<string, string>;
}

/** Range the bytes of a `size`-byte object a request asks for; undefined when it cannot be served. */
export function resolveRange(range: ByteRange | undefined, size: number): { start: number; end: number } | undefined {
  if (!range) return { start: 0, end: size - 1 };
  if ('suffix' in range) {
    if (range.suffix <= 0 || size === 0) return undefined;
    return { start: Math.max(0, size - range.suffix), end: size - 1 };
  }
  if (range.start >= size) return undefined;
  return { start: range.start, end: Math.min(range.end ?? size - 1, size - 1) };
}

type Deleted = { deleted: boolean };

export const STORAGE_CAPABILITIES = capabilities({
  'storage.bucket.create': capability<BucketRef & { region?: string }, { region: string }>({
    idempotent: true,
    description: 'Create the storage behind a bucket.',
  }),
  'storage.bucket.delete': capability<BucketRef, Deleted>({ idempotent: true, description: 'Remove an empty bucket.' }),
  'storage.object.put': capability<PutInput, PutOutput>({
    idempotent: false,
    description: 'Store an object from a stream.',
  }),
  'storage.object.get': capability<GetInput, GetResult>({
    idempotent: true,
    description: 'Stream an object, whole or a byte range.',
  }),
  'storage.object.head': capability<ObjectRef, ObjectInfo | null>({
    idempotent: true,
    description: "An object's size, ETag, content type and modification time.",
  }),
  'storage.object.delete': capability<ObjectRef, Deleted>({ idempotent: true, description: 'Delete an object.' }),
  'storage.object.put_if': capability<ConditionalPutInput, PutOutput | ConditionFailed>({
    idempotent: false,
    description: 'storage.object.put with a `condition` checked atomically with the write (S3 conditional writes).',
  }),
  'storage.object.delete_if': capability<ConditionalDeleteInput, Deleted | ConditionFailed>({
    idempotent: false,
    description: 'storage.object.delete with a `condition` checked atomically with the delete.',
  }),
  'storage.object.list': capability<ListInput, ListOutput>({
    idempotent: true,
    description: 'List keys by prefix, in key order.',
  }),
  'storage.object.presign': capability<PresignInput, PresignOutput>({
    idempotent: true,
    description: 'A URL that authorizes one method on one object until it expires.',
  }),
  'storage.object.presign_post': capability<PresignPostInput, PresignPostOutput>({
    idempotent: true,
    description: 'A browser form upload (POST policy) of one object, with a size limit the vendor enforces.',
  }),
});
