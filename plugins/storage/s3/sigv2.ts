import type { IncomingHttpHeaders } from 'node:http';
import { S3Error } from './errors.js';

// Signature Version 2 (`aws s3 presign` signs so by default: ?AWSAccessKeyId=&Signature=&Expires=,
// and older SDKs send `Authorization: AWS key:signature`) is not verified here. Answered as S3
// regions that take only Version 4 answer it, with what to change, rather than a bare
// AccessDenied that reads as a wrong key.

const HOW =
  'This endpoint verifies only Signature Version 4 (AWS4-HMAC-SHA256). With the AWS CLI, run '
  + '`aws configure set default.s3.signature_version s3v4`; with an SDK, set its signature version to v4 '
  + '(SDKs of the last years sign with v4 by default).';

export function refuseSigV2(headers: IncomingHttpHeaders, query: Map<string, string>): void {
  const header = headers.authorization;
  const v2Header = typeof header === 'string' && /^AWS [^\s:]+:/.test(header);
  const v2Query = query.has('AWSAccessKeyId') && query.has('Signature') && !query.has('X-Amz-Algorithm');
  if (v2Header || v2Query) {
    throw new S3Error('InvalidRequest', `The authorization mechanism you have provided is not supported. ${HOW}`);
  }
}
