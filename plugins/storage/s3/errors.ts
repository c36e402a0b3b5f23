// Errors of the S3 endpoint, as S3 sends them: an XML body with a code clients switch on.

// `as const` so S3Code is the union of these names: a misspelt code does not compile.
const STATUS = {
  AccessDenied: 403,
  AccessForbidden: 403,
  SignatureDoesNotMatch: 403,
  RequestTimeTooSkewed: 403,
  InvalidAccessKeyId: 403,
  AuthorizationHeaderMalformed: 400,
  AuthorizationQueryParametersError: 400,
  InvalidRequest: 400,
  BadRequest: 400,
  InvalidArgument: 400,
  InvalidBucketName: 400,
  KeyTooLongError: 400,
  XAmzContentSHA256Mismatch: 400,
  IncompleteBody: 400,
  InvalidDigest: 400,
  BadDigest: 400,
  EntityTooLarge: 413,
  EntityTooSmall: 400,
  MalformedXML: 400,
  MalformedPOSTRequest: 400,
  InvalidPolicyDocument: 400,
  InvalidPart: 400,
  InvalidPartOrder: 400,
  NoSuchUpload: 404,
  NoSuchBucket: 404,
  NoSuchKey: 404,
  NoSuchCORSConfiguration: 404,
  MethodNotAllowed: 405,
  BucketAlreadyOwnedByYou: 409,
  BucketNotEmpty: 409,
  PreconditionFailed: 412,
  InvalidRange: 416,
  InternalError: 500,
  NotImplemented: 501,
  ServiceUnavailable: 503,
} as const;

export type S3Code = keyof typeof STATUS;

export class S3Error extends Error {
  readonly status: number;
  constructor(
    readonly code: S3Code,
    message: string,
    readonly extra: Record<string, string> = {}
  ) {
    super(message);
    this.name = 'S3Error';
    this.status = STATUS[code];
  }
}

export function xmlEscape(s: string): string {
  return (
    s
      .replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!)
      // XML 1.0 cannot carry most control characters; keys never contain them, messages might.
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '')
  );
}

export const XML_HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n';
export const S3_NS = 'http://s3.amazonaws.com/doc/2006-03-01/';

export function errorXml(e: S3Error, resource: string, requestId: string): string {
  const extra = Object.entries(e.extra)
    .map(([k, v]) => `<${k}>${xmlEscape(v)}</${k}>`)
    .join('');
  return `${XML_HEAD}<Error><Code>${e.code}</Code><Message>${xmlEscape(e.message)}</Message>${extra}<Resource>${xmlEscape(resource)}</Resource><RequestId>${xmlEscape(requestId)}</RequestId></Error>`;
}

/** `<Tag>value</Tag>` for each defined field. */
export function tags(fields: Record<string, string | number | boolean | undefined>): string {
  return Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `<${k}>${xmlEscape(String(v))}</${k}>`)
    .join('');
}
