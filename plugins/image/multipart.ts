import { apiError } from '../../core/kit/area.js';

/** One part of a multipart/form-data body; `data` is a view into the body, not a copy. */
export interface FormPart {
  name: string;
  /** Set when the part was sent as a file (its Content-Disposition has a filename). */
  filename?: string;
  mime?: string;
  data: Buffer;
}

const CRLF_DASHES = Buffer.from('\r\n--');
const HEADER_END = Buffer.from('\r\n\r\n');
const MAX_PARTS = 64;
const MAX_HEADER_BYTES = 8 * 1024;

function malformed(why: string) {
  return apiError('invalid_request', `The multipart/form-data body is malformed: ${why}.`);
}

/** The boundary parameter of a multipart/form-data Content-Type (RFC 2046: 1 to 70 characters, maybe quoted). */
export function boundaryOf(contentType: string): string {
  const m = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;,"]{1,70}))/i.exec(contentType);
  if (!m) throw malformed('the Content-Type has no boundary');
  return m[1] ?? m[2];
}

/** The two Content-Disposition parameters read, each pattern compiled once (not a part at a time). */
const PARAMS = {
  name: /;\s*name=(?:"((?:[^"\\]|\\.)*)"|([^;\s]+))/i,
  filename: /;\s*filename=(?:"((?:[^"\\]|\\.)*)"|([^;\s]+))/i,
};

/** `name="x"` or `name=x` of a Content-Disposition header; quoted values may escape `"` and `\`. */
function param(header: string, key: keyof typeof PARAMS): string | undefined {
  const m = PARAMS[key].exec(header);
  if (!m) return undefined;
  return m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2];
}

/**
 * Where the next delimiter (`CRLF--boundary`) starts at or after `from`, or -1. Buffer#indexOf
 * with a long needle can crawl (V8 picks its algorithm from the needle: 3-5 ms on a 1.2 MB
 * image for some boundaries), while the 4-byte `CRLF--` runs at memchr speed and hardly ever
 * occurs in image data; each hit is then compared with the whole delimiter.
 */
function nextDelimiter(body: Buffer, delimiter: Buffer, from: number): number {
  for (let at = body.indexOf(CRLF_DASHES, from); at >= 0; at = body.indexOf(CRLF_DASHES, at + 1)) {
    if (
      body.compare(delimiter, 0, delimiter.length, at, at + delimiter.length) === 0
      && endsLine(body, at + delimiter.length)
    )
      return at;
  }
  return -1;
}

/**
 * A delimiter is a line of its own: `--` (the close) or transport padding and CRLF follow it.
 * Anything else is content that happens to start like the boundary (`--b0undy`), as busboy reads it.
 */
function endsLine(body: Buffer, pos: number): boolean {
  if (body[pos] === 0x2d && body[pos + 1] === 0x2d) return true;
  while (body[pos] === 0x20 || body[pos] === 0x09) pos++;
  return body[pos] === 0x0d && body[pos + 1] === 0x0a;
}

/**
 * The parts of a whole multipart/form-data body (RFC 7578), in order. The body is already in
 * memory under the route's body cap, so this is a scan for delimiters with views into it:
 * a 25 MiB image is never copied or run through a streaming parser's JavaScript byte loop.
 */
export function splitMultipart(body: Buffer, contentType: string): FormPart[] {
  const delimiter = Buffer.from(`\r\n--${boundaryOf(contentType)}`);
  // The first delimiter may open the body without the CRLF before it (no preamble).
  const opens = body.subarray(0, delimiter.length - 2).equals(delimiter.subarray(2));
  let at = opens && endsLine(body, delimiter.length - 2) ? -2 : nextDelimiter(body, delimiter, 0);
  if (at === -1) throw malformed('no part starts with the boundary');
  const parts: FormPart[] = [];
  for (;;) {
    let pos = at + delimiter.length;
    if (body[pos] === 0x2d && body[pos + 1] === 0x2d) return parts; // `--`: the close delimiter
    // Transport padding (spaces, tabs) may follow a delimiter before its CRLF (endsLine checked it).
    while (body[pos] === 0x20 || body[pos] === 0x09) pos++;
    const headersAt = pos + 2;
    const headersEnd = body.indexOf(HEADER_END, headersAt);
    if (headersEnd === -1 || headersEnd - headersAt > MAX_HEADER_BYTES) throw malformed("a part's headers do not end");
    const end = nextDelimiter(body, delimiter, headersEnd + 2);
    if (end === -1) throw malformed('the body ends before its closing boundary');
    if (parts.length === MAX_PARTS) throw malformed(`more than ${MAX_PARTS} parts`);
    parts.push(part(body.toString('latin1', headersAt, headersEnd), body.subarray(headersEnd + 4, end)));
    at = end;
  }
}

function part(headerText: string, data: Buffer): FormPart {
  let disposition: string | undefined;
  let mime: string | undefined;
  for (const line of headerText.split('\r\n')) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    // Header values are bytes; browsers send UTF-8 field and file names in them.
    const value = Buffer.from(line.slice(colon + 1).trim(), 'latin1').toString('utf8');
    if (name === 'content-disposition') disposition = value;
    else if (name === 'content-type') mime = value;
  }
  if (!disposition || !/^form-data\s*(;|$)/i.test(disposition))
    throw malformed('a part has no `Content-Disposition: form-data` header');
  const name = param(disposition, 'name');
  if (!name) throw malformed('a part has no name');
  const filename = param(disposition, 'filename');
  return { name, ...(filename !== undefined ? { filename } : {}), ...(mime ? { mime } : {}), data };
}
