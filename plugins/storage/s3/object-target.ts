import { keyProblem, MAX_KEY_BYTES, isResultsBucket } from '../../../core/kit/area.js';
import type { BucketRow } from '../service.js';
import { S3Error } from './errors.js';
import type { S3Request } from './request.js';

// The checks on where an object operation goes, shared by the object, copy, POST and multipart
// handlers; apart from them so that those handlers do not import each other.

/** An object key S3 would accept, or S3's error for it. */
export function checkKey(key: string): void {
  const problem = keyProblem(key);
  if (!problem) return;
  if (Buffer.byteLength(key) > MAX_KEY_BYTES) throw new S3Error('KeyTooLongError', 'Your key is too long.');
  throw new S3Error('InvalidArgument', `The object key ${problem}.`, { ArgumentName: 'key' });
}

/** The bucket a signed write goes to (never the read-only results). */
export async function writableBucket(r: S3Request): Promise<BucketRow> {
  if (!r.auth || !r.accountId) throw new S3Error('AccessDenied', 'Access Denied.');
  checkKey(r.key);
  if (isResultsBucket(r.bucket)) throw new S3Error('AccessDenied', 'Results are read-only.');
  const b = await r.storage.findBucket(r.accountId, r.bucket);
  if (!b) throw new S3Error('NoSuchBucket', 'The specified bucket does not exist.', { BucketName: r.bucket });
  return b;
}
