import type { IncomingHttpHeaders } from 'node:http';
import { S3Error } from './errors.js';

// Conditional requests (RFC 7232) as S3 answers them on GetObject and HeadObject.

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v.join(',') : v;
}

/** Whether an If-Match / If-None-Match list names `etag`; `*` names any existing object. Weak tags compare by value, as S3 does. */
function listMatches(list: string, etag: string): boolean {
  const want = etag.replace(/^"|"$/g, '');
  return list.split(',').some((item) => {
    const v = item.trim().replace(/^W\//, '');
    return v === '*' || v.replace(/^"|"$/g, '') === want;
  });
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
export function readCondition(headers: IncomingHttpHeaders, o: { etag: string; last_modified: number }): 'not-modified' | undefined {
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
  headers['if-match'] !== undefined || headers['if-none-match'] !== undefined || headers['if-modified-since'] !== undefined || headers['if-unmodified-since'] !== undefined;

function preconditionFailed(condition: string): S3Error {
  return new S3Error('PreconditionFailed', 'At least one of the pre-conditions you specified did not hold.', { Condition: condition });
}

// Conditional writes are what clients build locks on (Terraform's S3 lockfile: PutObject
// with If-None-Match: *). Doing them atomically needs a compare-and-swap from the vendor,
// which the storage contract does not have: answering them as plain writes would let two
// writers both "win", so they are refused before the body is read or anything is stored.
const WRITE_CONDITIONS: Record<string, string[]> = {
  PutObject: ['if-none-match', 'if-match'],
  DeleteObject: ['if-match', 'x-amz-if-match-last-modified-time', 'x-amz-if-match-size'],
  CopyObject: ['if-none-match', 'if-match', 'x-amz-copy-source-if-match', 'x-amz-copy-source-if-none-match',
    'x-amz-copy-source-if-modified-since', 'x-amz-copy-source-if-unmodified-since'],
  CompleteMultipartUpload: ['if-none-match', 'if-match'],
};

/** Throw NotImplemented, naming the header, when a write carries a condition this endpoint cannot honour atomically. */
export function refuseConditionalWrite(headers: IncomingHttpHeaders, op: keyof typeof WRITE_CONDITIONS): void {
  const name = WRITE_CONDITIONS[op].find((h) => headers[h] !== undefined);
  if (!name) return;
  const shown = name.startsWith('x-amz-') ? name : name.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
  throw new S3Error('NotImplemented', `Conditional writes (${shown} on ${op}) are not supported by this endpoint.`, { Header: name });
}
