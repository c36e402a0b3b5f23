import t from 'tap';
import { createHash, createHmac } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { AwsChunkedDecoder } from '../../../../plugins/storage/s3/chunked.js';
import { checksumFor } from '../../../../plugins/storage/s3/checksums.js';

const EMPTY = createHash('sha256').update('').digest('hex');
const key = Buffer.alloc(32, 9);
const signing = { key, amz: '20261122T120000Z', scope: '20261122/us-east-1/s3/aws4_request', seed: 'a'.repeat(64) };

function signedBody(chunks: Buffer[], tamper = -1): Buffer {
  let prev = signing.seed;
  const parts: Buffer[] = [];
  for (const [i, c] of [...chunks, Buffer.alloc(0)].entries()) {
    const sts = `AWS4-HMAC-SHA256-PAYLOAD\n${signing.amz}\n${signing.scope}\n${prev}\n${EMPTY}\n${createHash('sha256').update(c).digest('hex')}`;
    let sig = createHmac('sha256', key).update(sts).digest('hex');
    prev = sig;
    if (i === tamper) sig = sig.replace(/^./, (x) => (x === '0' ? '1' : '0'));
    parts.push(Buffer.from(`${c.length.toString(16)};chunk-signature=${sig}\r\n`), c, Buffer.from('\r\n'));
  }
  return Buffer.concat(parts);
}

function unsignedBody(chunks: Buffer[], trailer: string): Buffer {
  const parts = chunks.map((c) => Buffer.concat([Buffer.from(`${c.length.toString(16)}\r\n`), c, Buffer.from('\r\n')]));
  return Buffer.concat([...parts, Buffer.from(`0\r\n${trailer}\r\n\r\n`)]);
}

/** Feed `raw` in pieces of `step` bytes, so every boundary (inside CRLFs, headers, data) is hit. */
const pieces = (raw: Buffer, step: number) =>
  Readable.from(Array.from({ length: Math.ceil(raw.length / step) }, (_, i) => raw.subarray(i * step, (i + 1) * step)));

t.test('unsigned aws-chunked with a checksum trailer, split at every possible boundary', async (t) => {
  const data = [Buffer.from('hello '), Buffer.alloc(70_000, 3), Buffer.from('world')];
  const crc = checksumFor('x-amz-checksum-crc32')!;
  for (const d of data) crc.update(d);
  const raw = unsignedBody(data, `x-amz-checksum-crc32:${crc.digestBase64()}`);
  for (const step of [1, 2, 3, 7, 64, 65536, raw.length]) {
    const dec = new AwsChunkedDecoder();
    const out = await buffer(pieces(raw, step).pipe(dec));
    t.same(out, Buffer.concat(data), `pieces of ${step}`);
    t.equal(dec.trailers['x-amz-checksum-crc32'], crc.digestBase64());
  }
});

t.test('crc32 matches the well-known check value', async (t) => {
  const c = checksumFor('x-amz-checksum-crc32')!;
  c.update(Buffer.from('123456789'));
  t.equal(Buffer.from(c.digestBase64(), 'base64').readUInt32BE(), 0xcbf43926);
  const cc = checksumFor('x-amz-checksum-crc32c')!;
  cc.update(Buffer.from('123456789'));
  t.equal(Buffer.from(cc.digestBase64(), 'base64').readUInt32BE(), 0xe3069283);
});

t.test('signed chunks: the chain verifies; a tampered chunk signature fails', async (t) => {
  const data = [Buffer.alloc(65536, 1), Buffer.from('tail')];
  const raw = signedBody(data);
  for (const step of [1, 13, raw.length])
    t.same(
      await buffer(pieces(raw, step).pipe(new AwsChunkedDecoder(signing))),
      Buffer.concat(data),
      `pieces of ${step}`
    );
  for (const i of [0, 1, 2]) {
    await t.rejects(
      buffer(pieces(signedBody(data, i), 1000).pipe(new AwsChunkedDecoder(signing))),
      { code: 'SignatureDoesNotMatch' },
      `chunk ${i} tampered`
    );
  }
  const unsigned = unsignedBody(data, '');
  await t.rejects(
    buffer(pieces(unsigned, 1000).pipe(new AwsChunkedDecoder(signing))),
    { code: 'SignatureDoesNotMatch' },
    'signatures are required'
  );
});

t.test('malformed or truncated bodies are IncompleteBody', async (t) => {
  const good = unsignedBody([Buffer.from('abc')], 'x-amz-checksum-crc32:AAAAAA==');
  for (const bad of [
    good.subarray(0, good.length - 12),
    Buffer.from('zz\r\nabc\r\n0\r\n\r\n'),
    Buffer.from('2\r\nabc\r\n0\r\n\r\n'),
  ]) {
    await t.rejects(
      buffer(Readable.from([bad]).pipe(new AwsChunkedDecoder())),
      { code: 'IncompleteBody' },
      JSON.stringify(bad.toString().slice(0, 20))
    );
  }
});
