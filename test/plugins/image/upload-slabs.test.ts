import t from 'tap';
import { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { UploadSlabs } from '../../../plugins/image/upload-slabs.js';

// The upload reader: large bodies land in a slab of the next power of two, a slab goes back
// only after a 200 and only within the budget, and the caps and the declared length hold as
// Fastify's own reader holds them.

const KiB = 1024;
const req = (length: number | undefined) =>
  ({ headers: length === undefined ? {} : { 'content-length': String(length) } }) as unknown as FastifyRequest;
/** The body in 64-KiB chunks, as the HTTP parser hands them over. */
const body = (bytes: Buffer, chunk = 64 * KiB) =>
  Readable.from(
    Array.from({ length: Math.ceil(bytes.length / chunk) }, (_, i) => bytes.subarray(i * chunk, (i + 1) * chunk))
  );
const bytes = (n: number, fill: number) => Buffer.alloc(n, fill);
const LIMIT = 4096 * KiB;

t.test('a large body lands in a slab; once reusable the next body of its size takes it, otherwise not', async (t) => {
  const slabs = new UploadSlabs(8192 * KiB);
  const a = req(400 * KiB);
  const first = await slabs.read(a, body(bytes(400 * KiB, 1)), LIMIT);
  t.same(first, bytes(400 * KiB, 1));
  t.equal(first.buffer.byteLength, 512 * KiB, 'a slab of the next power of two');
  slabs.settle(a, true);
  t.equal(slabs.freeBytes, 512 * KiB);
  const b = req(300 * KiB);
  const second = await slabs.read(b, body(bytes(300 * KiB, 2)), LIMIT);
  t.same(second, bytes(300 * KiB, 2), 'the second body, none of the first in its view');
  t.equal(second.buffer, first.buffer, 'the same slab');
  slabs.settle(b, false);
  const third = await slabs.read(req(300 * KiB), body(bytes(300 * KiB, 3)), LIMIT);
  t.same(third, bytes(300 * KiB, 3));
  t.not(third.buffer, second.buffer, 'a slab its request may still be read from is not reused');
  const other = await slabs.read(req(1100 * KiB), body(bytes(1100 * KiB, 4)), LIMIT);
  t.equal(other.buffer.byteLength, 2048 * KiB, 'another size, another slab');
});

t.test('free slabs are kept within the budget; 0 keeps none', async (t) => {
  const slabs = new UploadSlabs(1024 * KiB);
  const reqs = [req(600 * KiB), req(600 * KiB)];
  const got = await Promise.all(reqs.map((r) => slabs.read(r, body(bytes(600 * KiB, 1)), LIMIT)));
  for (const r of reqs) slabs.settle(r, true);
  t.equal(slabs.freeBytes, 1024 * KiB, 'one 1-MiB slab kept, the second over the budget');
  t.not(got[0].buffer, got[1].buffer);
  const none = new UploadSlabs(0);
  const r = req(600 * KiB);
  t.same(await none.read(r, body(bytes(600 * KiB, 5)), LIMIT), bytes(600 * KiB, 5));
  none.settle(r, true);
  t.equal(none.freeBytes, 0);
});

t.test('a small body, or one without a length, is gathered as Fastify gathers it', async (t) => {
  const slabs = new UploadSlabs(8192 * KiB);
  const small = req(100);
  t.same(await slabs.read(small, body(bytes(100, 4), 7), LIMIT), bytes(100, 4));
  t.same(await slabs.read(req(undefined), body(bytes(500 * KiB, 5)), LIMIT), bytes(500 * KiB, 5));
  slabs.settle(small, true);
  t.equal(slabs.freeBytes, 0, 'neither took a slab');
});

t.test(
  'over the cap: 413 before reading when declared, while reading when not; a length that lies is 400',
  async (t) => {
    const slabs = new UploadSlabs(8192 * KiB);
    await t.rejects(slabs.read(req(LIMIT + 1), body(bytes(10, 1)), LIMIT), {
      code: 'FST_ERR_CTP_BODY_TOO_LARGE',
      statusCode: 413,
    });
    await t.rejects(slabs.read(req(undefined), body(bytes(LIMIT + 1, 1)), LIMIT), {
      code: 'FST_ERR_CTP_BODY_TOO_LARGE',
    });
    await t.rejects(slabs.read(req(500 * KiB), body(bytes(400 * KiB, 1)), LIMIT), {
      code: 'FST_ERR_CTP_INVALID_CONTENT_LENGTH',
    });
    await t.rejects(slabs.read(req(300 * KiB), body(bytes(600 * KiB, 1)), LIMIT), {
      code: 'FST_ERR_CTP_INVALID_CONTENT_LENGTH',
    });
    t.equal(slabs.freeBytes, 512 * KiB, 'the slab those bodies held in turn went back');
  }
);

t.test('a stream that fails is a 400 unless it says otherwise', async (t) => {
  const slabs = new UploadSlabs(8192 * KiB);
  const broken = new Readable({
    read() {
      this.destroy(new Error('aborted'));
    },
  });
  await t.rejects(slabs.read(req(300 * KiB), broken, LIMIT), { message: 'aborted', statusCode: 400 });
  t.equal(slabs.freeBytes, 512 * KiB, 'its slab went back');
});
