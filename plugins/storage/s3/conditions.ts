import type { IncomingHttpHeaders } from 'node:http';
import { S3Error } from './errors.js';
import { etagListed, type WriteCondition } from '../../../core/kit/area.js';

// Conditional requests (RFC 7232) as S3 answers them on GetObject and HeadObject.

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v.join(',') : v;
}

/** Whether an If-Match / If-None-Match list names `etag`; `*` names any existing object. Weak tags compare by value, as S3 does. */
function listMatches(list: string, etag: string): boolean {
  return etagListed(etagList(list), etag);
}

/** Seconds since the epoch of an HTTP date, or undefined for one that does not parse (ignored, as RFC 7232 says). */
function seconds(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const ms = Date.parse(raw);
  return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000);
}

/**
 * What the conditional headers of a read make of an object: 'not-modified' (answer 304),
 * or undefined to serve it; a failed If-Match / If-Unmodified-Since throws PreconditionFailed.
 * RFC 7232 section 6 order: If-Match, else If-Unmodified-Since; then If-None-Match, else
 * If-Modified-Since. Last-Modified is sent at whole seconds, so it is compared at whole seconds.
 */
export function readCondition(
  headers: IncomingHttpHeaders,
  o: { etag: string; last_modified: number }
): 'not-modified' | undefined {
  const modified = Math.floor(o.last_modified / 1000);
  const ifMatch = header(headers, 'if-match');
  if (ifMatch !== undefined) {
    if (!listMatches(ifMatch, o.etag)) throw preconditionFailed('If-Match');
  } else {
    const since = seconds(header(headers, 'if-unmodified-since'));
    if (since !== undefined && modified > since) throw preconditionFailed('If-Unmodified-Since');
  }
  const ifNoneMatch = header(headers, 'if-none-match');
  if (ifNoneMatch !== undefined) return listMatches(ifNoneMatch, o.etag) ? 'not-modified' : undefined;
  const since = seconds(header(headers, 'if-modified-since'));
  return since !== undefined && modified <= since ? 'not-modified' : undefined;
}

export const hasReadCondition = (headers: IncomingHttpHeaders) =>
  headers['if-match'] !== undefined
  || headers['if-none-match'] !== undefined
  || headers['if-modified-since'] !== undefined
  || headers['if-unmodified-since'] !== undefined;

function preconditionFailed(condition: string): S3Error {
  return new S3Error('PreconditionFailed', 'At least one of the pre-conditions you specified did not hold.', {
    Condition: condition,
  });
}

// Conditional writes are what clients build locks on (Terraform's S3 lockfile: PutObject
// with If-None-Match: *). They are done only where the bucket's vendor checks the condition
// atomically with the write (`storage.object.put_if` / `delete_if`: local-storage in the
// transaction that commits the object, s3 by passing the headers on). Elsewhere, or for a
// condition no vendor is asked to check, they are refused before the body is read or anything
// is stored: answering them as plain writes would let two holders of a "lock" both win.
const WRITE_CONDITIONS: Record<string, string[]> = {
  PutObject: ['if-none-match', 'if-match'],
  DeleteObject: ['if-match', 'x-amz-if-match-last-modified-time', 'x-amz-if-match-size'],
  CopyObject: [
    'if-none-match',
    'if-match',
    'x-amz-copy-source-if-match',
    'x-amz-copy-source-if-none-match',
    'x-amz-copy-source-if-modified-since',
    'x-amz-copy-source-if-unmodified-since',
  ],
  CompleteMultipartUpload: ['if-none-match', 'if-match'],
};

/** The headers a vendor with conditional writes is asked to check, per operation. */
const CHECKED: Record<string, string[]> = {
  PutObject: ['if-none-match', 'if-match'],
  DeleteObject: ['if-match'],
  CopyObject: ['if-none-match', 'if-match'],
  CompleteMultipartUpload: ['if-none-match', 'if-match'],
};

function notImplemented(name: string, op: string, why: string): S3Error {
  const shown = name.startsWith('x-amz-')
    ? name
    : name.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
  return new S3Error('NotImplemented', `Conditional writes (${shown} on ${op}) are not supported ${why}.`, {
    Header: name,
  });
}

/**
 * The condition a write's headers carry, to be checked atomically by the vendor, or undefined
 * when there is none. Throws NotImplemented, naming the header, for one that cannot be honoured:
 * the vendor has no conditional writes (`canCheck()` false), the header is not one S3 checks on
 * writes of this kind, If-None-Match is anything but `*`, or both conditions are given.
 */
export function writeCondition(
  headers: IncomingHttpHeaders,
  op: keyof typeof WRITE_CONDITIONS,
  canCheck: () => boolean
): WriteCondition | undefined {
  const present = WRITE_CONDITIONS[op].filter((h) => headers[h] !== undefined);
  if (!present.length) return undefined; // the usual write: the vendor is not even looked up
  const atomic = canCheck();
  const unchecked = present.find((h) => !atomic || !CHECKED[op].includes(h));
  if (unchecked) throw notImplemented(unchecked, op, atomic ? 'by this endpoint' : "by this bucket's storage vendor");
  if (present.length > 1) throw notImplemented(present[1], op, 'together with another condition');
  const ifNoneMatch = header(headers, 'if-none-match');
  if (ifNoneMatch !== undefined) {
    if (ifNoneMatch.trim() !== '*') throw notImplemented('if-none-match', op, 'with a value other than *');
    return { if_none_match: '*' };
  }
  return { if_match: etagList(header(headers, 'if-match')!) };
}

/** An If-Match list as bare ETags: `"a", W/"b"` → [a, b]. */
function etagList(list: string): string[] {
  return list
    .split(',')
    .map((item) => item.trim().replace(/^W\//, '').replace(/^"|"$/g, ''))
    .filter(Boolean);
}

/** A vendor's "condition did not hold", as S3 answers it: 404 when If-Match found no object, else 412. */
export function conditionFailed(reason: 'exists' | 'missing' | 'etag', key: string): S3Error {
  if (reason === 'missing') return new S3Error('NoSuchKey', 'The specified key does not exist.', { Key: key });
  return preconditionFailed(reason === 'exists' ? 'If-None-Match' : 'If-Match');
}
