import { Transform, type TransformCallback } from 'node:stream';
import { S3Error } from './errors.js';
import { EMPTY_SHA256, hmacHex } from '../../../core/kit/area.js';
import { sameSignature } from './sigv4-request.js';
import { createHash, type Hash } from 'node:crypto';

export interface ChunkSigning {
  key: Buffer;
  amz: string;
  scope: string;
  /** The request's own signature, which the first chunk's signature chains on. */
  seed: string;
}

const CRLF = Buffer.from('\r\n');
const MAX_LINE = 4096;

/**
 * Decodes `content-encoding: aws-chunked` bodies: `<hex size>[;chunk-signature=…]\r\n<data>\r\n`
 * repeated, a zero-size chunk, then trailer lines (`x-amz-checksum-crc32:…`) and an empty
 * line. With `signing`, each chunk's signature is checked against the chain (STREAMING-
 * AWS4-HMAC-SHA256-PAYLOAD); without it, signatures are not expected (…UNSIGNED-PAYLOAD-TRAILER).
 * Trailers are handed to `onTrailers` before the stream ends, so a checksum can be checked.
 */
export class AwsChunkedDecoder extends Transform {
  private state: 'size' | 'data' | 'data-end' | 'trailer' | 'done' = 'size';
  private line = Buffer.alloc(0);
  private remaining = 0;
  private chunkSig = '';
  private prevSig: string;
  private hash: Hash | undefined;
  readonly trailers: Record<string, string> = {};

  constructor(private readonly signing?: ChunkSigning) {
    super();
    this.prevSig = signing?.seed ?? '';
  }

  private verifyChunk(dataHash: string): void {
    if (!this.signing) return;
    const s = this.signing;
    const sts = `AWS4-HMAC-SHA256-PAYLOAD\n${s.amz}\n${s.scope}\n${this.prevSig}\n${EMPTY_SHA256}\n${dataHash}`;
    const want = hmacHex(s.key, sts);
    if (!sameSignature(want, this.chunkSig))
      throw new S3Error('SignatureDoesNotMatch', 'A chunk signature of the streaming body does not match.');
    this.prevSig = this.chunkSig;
  }

  /** Take one CRLF-terminated line from `buf` at `i`; returns the new offset, or -1 when more input is needed. */
  private takeLine(buf: Buffer, i: number): { next: number; text?: string } {
    const end = buf.indexOf(CRLF, i);
    if (end < 0) {
      this.line = Buffer.concat([this.line, buf.subarray(i)]);
      if (this.line.length > MAX_LINE)
        throw new S3Error('IncompleteBody', 'A chunk header of the aws-chunked body is too long.');
      return { next: buf.length };
    }
    // A CR at the end of the previous piece and the LF at the start of this one.
    const text = Buffer.concat([this.line, buf.subarray(i, end)]).toString('latin1');
    this.line = Buffer.alloc(0);
    return { next: end + 2, text };
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    try {
      // Join a pending partial line with a split CRLF so indexOf finds it.
      let buf = chunk;
      if (this.line.length && this.line[this.line.length - 1] === 0x0d && buf[0] === 0x0a) {
        buf = Buffer.concat([this.line, buf]);
        this.line = Buffer.alloc(0);
      }
      let i = 0;
      while (i < buf.length) {
        if (this.state === 'data') {
          const n = Math.min(this.remaining, buf.length - i);
          const piece = buf.subarray(i, i + n);
          this.hash?.update(piece);
          this.push(piece);
          this.remaining -= n;
          i += n;
          if (this.remaining === 0) {
            this.state = 'data-end';
            if (this.hash) this.verifyChunk(this.hash.digest('hex'));
          }
          continue;
        }
        const { next, text } = this.takeLine(buf, i);
        i = next;
        if (text === undefined) break;
        if (this.state === 'data-end') {
          if (text !== '')
            throw new S3Error(
              'IncompleteBody',
              'The aws-chunked body is malformed: a chunk is longer than its size says.'
            );
          this.state = 'size';
        } else if (this.state === 'size') {
          const [sizeHex, ...ext] = text.split(';');
          if (!/^[0-9a-fA-F]{1,16}$/.test(sizeHex))
            throw new S3Error('IncompleteBody', 'The aws-chunked body is malformed: bad chunk size.');
          const sig = ext.find((e) => e.startsWith('chunk-signature='))?.slice('chunk-signature='.length);
          if (this.signing && !sig)
            throw new S3Error('SignatureDoesNotMatch', 'A chunk of the streaming body carries no signature.');
          this.chunkSig = sig ?? '';
          this.remaining = parseInt(sizeHex, 16);
          if (this.remaining === 0) {
            if (this.signing) this.verifyChunk(EMPTY_SHA256);
            this.state = 'trailer';
          } else {
            this.state = 'data';
            this.hash = this.signing ? createHash('sha256') : undefined;
          }
        } else if (this.state === 'trailer') {
          if (text === '') this.state = 'done';
          else {
            const c = text.indexOf(':');
            if (c > 0) this.trailers[text.slice(0, c).trim().toLowerCase()] = text.slice(c + 1).trim();
          }
        } else {
          throw new S3Error('IncompleteBody', 'Data after the end of the aws-chunked body.');
        }
      }
      cb();
    } catch (e) {
      cb(e as Error);
    }
  }

  override _flush(cb: TransformCallback): void {
    // Some clients end the body right after the trailers, without the final empty line.
    if (this.state === 'trailer' && this.line.length === 0) this.state = 'done';
    if (this.state !== 'done')
      return cb(new S3Error('IncompleteBody', 'The aws-chunked body ended before its last chunk.'));
    cb();
  }
}
