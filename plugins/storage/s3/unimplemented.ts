import { S3Error } from './errors.js';

// Request headers (and POST form fields) of S3 features this endpoint does not have. Accepting
// and ignoring them would pretend: an SSE-C object would be stored in plaintext and served to
// anyone without the customer's key, a KMS key would be named but not used, a grant not granted.
// So they are refused with 501 NotImplemented, naming the header, before anything is stored.

const ENCRYPTION = /^x-amz-(copy-source-)?server-side-encryption/;
const GRANT = /^x-amz-grant-/;

type Lookup = Iterable<string>;

/** 501 for server-side encryption (SSE-S3, SSE-KMS, SSE-C, on a copy's source too) and ACL grants. */
export function refuseUnimplemented(names: Lookup, what: 'header' | 'form field' = 'header'): void {
  for (const raw of names) {
    const name = raw.toLowerCase();
    if (ENCRYPTION.test(name)) {
      throw new S3Error(
        'NotImplemented',
        `The ${name} ${what} is not implemented by this endpoint: it does not `
          + 'encrypt objects with a key of yours or a KMS key, and does not store them unencrypted pretending it did. '
          + 'Send the request without it.',
        { Header: name }
      );
    }
    if (GRANT.test(name)) {
      throw new S3Error(
        'NotImplemented',
        `The ${name} ${what} is not implemented by this endpoint: `
          + 'access is per bucket (private, or public for reads).',
        { Header: name }
      );
    }
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
