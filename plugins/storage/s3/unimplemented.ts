import { S3Error } from './errors.js';

// Request headers (and POST form fields) of S3 features this endpoint does not have. Accepting
// and ignoring them would pretend: an SSE-C object would be stored in plaintext and served to
// anyone without the customer's key, a KMS key would be named but not used, a grant not granted,
// a locked object deletable, a tag or storage class dropped.
// So they are refused with 501 NotImplemented, naming the header, before anything is stored.

const ENCRYPTION = /^x-amz-(copy-source-)?server-side-encryption/;
const GRANT = /^x-amz-grant-/;
// Object lock is WORM storage: a client that asked for it must not believe an object is kept
// when any holder of the key can delete it.
const OBJECT_LOCK = /^x-amz-object-lock-(mode|retain-until-date|legal-hold)$/;

type Entries = Iterable<readonly [string, unknown]>;

const notImplemented = (name: string, what: string, why: string) =>
  new S3Error('NotImplemented', `The ${name} ${what} is not implemented by this endpoint: ${why}`, { Header: name });

/** Why a header (or form field) of this name and value asks for what the endpoint does not do, if it does. */
function unserved(name: string, value: string): string | undefined {
  if (ENCRYPTION.test(name))
    return (
      'it does not encrypt objects with a key of yours or a KMS key, and does not store them unencrypted '
      + 'pretending it did. Send the request without it.'
    );
  if (GRANT.test(name)) return 'access is per bucket (private, or public for reads).';
  if (OBJECT_LOCK.test(name))
    return 'objects have no object lock (retention or legal hold): any holder of a key may delete them.';
  if (name === 'x-amz-bucket-object-lock-enabled' && value.trim().toLowerCase() !== 'false')
    return 'buckets have no object lock: any holder of a key may delete their objects.';
  if (name === 'x-amz-tagging') return 'objects have no tags. Send the request without it.';
  if (name === 'x-amz-storage-class' && value.trim().toUpperCase() !== 'STANDARD')
    return `every object is stored as STANDARD, not ${value}.`;
  return undefined;
}

/**
 * 501 for server-side encryption (SSE-S3, SSE-KMS, SSE-C, on a copy's source too), ACL
 * grants, object lock (on a bucket, retention, legal hold), tags and a storage class other
 * than STANDARD.
 */
export function refuseUnimplemented(entries: Entries, what: 'header' | 'form field' = 'header'): void {
  for (const [raw, value] of entries) {
    const name = raw.toLowerCase();
    const why = unserved(name, Array.isArray(value) ? value.join(',') : String(value ?? ''));
    if (why) throw notImplemented(name, what, why);
  }
}

/**
 * x-amz-expected-bucket-owner (and its copy-source twin): a bucket of another account is 403
 * AccessDenied, as S3 answers, so a client checking that it writes into its own bucket is told.
 */
export function checkExpectedOwner(headers: Record<string, unknown>, owner: string | undefined): void {
  for (const name of ['x-amz-expected-bucket-owner', 'x-amz-source-expected-bucket-owner']) {
    const v = headers[name];
    if (v !== undefined && String(v).trim() !== owner) throw new S3Error('AccessDenied', 'Access Denied.');
  }
}

/**
 * x-amz-acl (or a form's `acl` field) on a write into a bucket. Objects have no ACL of their
 * own: `private` is what every object is (a public bucket reads as S3's bucket policy granting
 * public reads, which a private object ACL does not undo, so rclone's default `private` works
 * there too), and `public-read` is what objects of a public bucket already are. Anything else
 * would not be what the object gets.
 */
export function checkObjectAcl(
  value: string | string[] | undefined,
  bucketAcl: string,
  what: 'header' | 'form field' = 'header'
): void {
  if (value === undefined) return;
  const v = String(value).trim().toLowerCase();
  const isPublic = bucketAcl === 'public';
  if (v === 'private' || (v === 'public-read' && isPublic)) return;
  const name = what === 'header' ? 'x-amz-acl' : 'acl';
  throw new S3Error(
    'NotImplemented',
    `The ${name} ${what} "${String(value)}" is not implemented by this endpoint: objects `
      + `have their bucket's access (this bucket is ${isPublic ? 'public' : 'private'}); `
      + `send private${isPublic ? ' or public-read' : ''}, or leave it out.`,
    { Header: name }
  );
}

/** x-amz-acl on CreateBucket: `private` (the default) or `public-read`, which buckets can be. */
export function bucketAclOf(value: string | string[] | undefined): 'private' | 'public' {
  if (value === undefined) return 'private';
  const v = String(value).trim().toLowerCase();
  if (v === 'private') return 'private';
  if (v === 'public-read') return 'public';
  throw new S3Error(
    'NotImplemented',
    `The x-amz-acl header "${String(value)}" is not implemented by this endpoint: `
      + 'a bucket is private or public-read.',
    { Header: 'x-amz-acl' }
  );
}
