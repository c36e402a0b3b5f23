// Bucket names and object keys as S3 accepts them, checked once here for the API, the S3
// endpoint and every vendor. A key that passes can be mapped to a path without escaping
// the bucket's directory: no `.` or `..` segments, no empty segments, no control characters.

export const MAX_KEY_BYTES = 1024;

const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;
const RESERVED_PREFIXES = ['xn--', 'sthree-', 'amzn-s3-demo-'];
const RESERVED_SUFFIXES = ['-s3alias', '--ol-s3', '.mrap', '--x-s3', '--table-s3'];

/** Why a bucket name breaks the S3 naming rules, or undefined when it is valid. */
export function bucketNameProblem(name: string): string | undefined {
  if (name.length < 3 || name.length > 63) return 'must be 3 to 63 characters long';
  if (!BUCKET.test(name))
    return 'may contain only lower-case letters, digits, dots and hyphens, and must start and end with a letter or digit';
  if (name.includes('..')) return 'must not contain two adjacent dots';
  if (name.includes('.-') || name.includes('-.')) return 'must not have a dot next to a hyphen';
  if (IPV4.test(name)) return 'must not be formatted as an IP address';
  if (RESERVED_PREFIXES.some((p) => name.startsWith(p))) return `must not start with ${RESERVED_PREFIXES.join(', ')}`;
  if (RESERVED_SUFFIXES.some((s) => name.endsWith(s))) return `must not end with ${RESERVED_SUFFIXES.join(', ')}`;
  return undefined;
}

// C0 controls, DEL and the C1 range.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why an object key is refused, or undefined when it is safe. */
export function keyProblem(key: string): string | undefined {
  if (key.length === 0) return 'must not be empty';
  if (LONE_SURROGATE.test(key)) return 'must be valid UTF-8';
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) return `must be at most ${MAX_KEY_BYTES} bytes of UTF-8`;
  if (CONTROL.test(key)) return 'must not contain control characters';
  for (const seg of key.split('/')) {
    if (seg === '') return 'must not have empty segments (a leading, trailing or doubled "/")';
    if (seg === '.' || seg === '..') return 'must not have "." or ".." segments';
  }
  return undefined;
}

/** Key prefixes (list filters) may end with "/" and may be empty; otherwise the key rules hold. */
export function prefixProblem(prefix: string): string | undefined {
  if (prefix === '') return undefined;
  if (LONE_SURROGATE.test(prefix)) return 'must be valid UTF-8';
  if (Buffer.byteLength(prefix, 'utf8') > MAX_KEY_BYTES) return `must be at most ${MAX_KEY_BYTES} bytes of UTF-8`;
  if (CONTROL.test(prefix)) return 'must not contain control characters';
  return undefined;
}

/** S3 orders keys by their UTF-8 bytes, which is not JavaScript's UTF-16 order. */
/**
 * The common prefix a list cursor stands for, when it is one: `after` as a listing with
 * `prefix` and `delimiter` rolls it up. A key that merely ends with the delimiter is not one
 * when that delimiter is part of the prefix (prefix `é`, delimiter `é`, key `é`).
 */
export function rolledUp(after: string, prefix: string, delimiter: string | undefined): string | undefined {
  if (!delimiter || !after.startsWith(prefix)) return undefined;
  const i = after.indexOf(delimiter, prefix.length);
  return i < 0 ? undefined : after.slice(0, i + delimiter.length);
}

export function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** `100 MiB`, `1.5 GiB`: sizes in messages that name a cap. */
export function formatBytes(n: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${Number.isInteger(v) ? v : v.toFixed(1)} ${units[i]}`;
}
