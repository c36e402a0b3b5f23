import t from 'tap';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { receive, INLINE_MAX } from '../../../vendors/local-storage/receive.js';

function body(size: number, chunk = 64 * 1024): { stream: Readable; bytes: Buffer } {
  const bytes = Buffer.alloc(size).map((_, i) => (i * 7 + (i >> 12)) & 0xff);
  const parts: Buffer[] = [];
  for (let off = 0; off < size; off += chunk) parts.push(bytes.subarray(off, off + chunk));
  return { stream: Readable.from(parts), bytes };
}

const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

t.test(
  'small, medium and many-batch bodies: the right bytes on disk and the MD5 (worker for large ones)',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-recv-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    for (const [size, syncEvery] of [
      [0, undefined],
      [INLINE_MAX, undefined],
      [INLINE_MAX + 1, undefined],
      [2 * 1024 * 1024, undefined],
      [5 * 1024 * 1024 + 3, 1],
      [3 * 1024 * 1024, 1],
    ] as const) {
      const { stream, bytes } = body(size);
      const path = join(dir, `f${size}-${syncEvery}`);
      let opened = false;
      let fh: Awaited<ReturnType<typeof open>> | undefined;
      const got = await receive(
        stream,
        {
          open: async () => {
            opened = true;
            return (fh = await open(path, 'wx'));
          },
        },
        { syncEvery }
      );
      await fh?.close();
      t.equal(got.size, size, `${size}: size`);
      t.equal(got.md5, md5(bytes), `${size}: md5`);
      if (size <= INLINE_MAX) {
        t.notOk(opened, `${size}: kept inline, no file`);
        t.same(Buffer.concat(got.inline ?? []), bytes);
      } else {
        t.same(readFileSync(path), bytes, `${size}: the file holds the body`);
      }
    }
  }
);

t.test('a body that fails midway rejects and leaves the worker ready for the next one', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-recv-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  let sent = 0;
  const failing = new Readable({
    read() {
      if (sent++ < 40) this.push(Buffer.alloc(64 * 1024, 1));
      else this.destroy(new Error('client went away'));
    },
  });
  let fh: Awaited<ReturnType<typeof open>> | undefined;
  await t.rejects(receive(failing, { open: async () => (fh = await open(join(dir, 'x'), 'wx')) }), /client went away/);
  await fh?.close();
  const { stream, bytes } = body(3 * 1024 * 1024);
  let fh2: Awaited<ReturnType<typeof open>> | undefined;
  const got = await receive(stream, { open: async () => (fh2 = await open(join(dir, 'y'), 'wx')) });
  await fh2?.close();
  t.equal(got.md5, md5(bytes));
});
