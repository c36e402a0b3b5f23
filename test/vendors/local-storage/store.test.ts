import t from 'tap';
import { mkdtempSync, rmSync, readdirSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { Layout } from '../../../vendors/local-storage/layout.js';
import { FileStore } from '../../../vendors/local-storage/store.js';
import { INLINE_MAX } from '../../../vendors/local-storage/receive.js';

function fresh(t: { teardown(fn: () => void): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-ls-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return { dir, store: new FileStore(new Layout(dir)) };
}

const A = 'acct_test1';
const put = (store: FileStore, key: string, body: string | Buffer, bucket = 'bk1') =>
  store.put({ account: A, bucket, key, body: Readable.from([Buffer.from(body)]), content_type: 'text/plain' });

async function allFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) if (e.isFile()) out.push(join((e as any).parentPath ?? (e as any).path, e.name));
  return out;
}

t.test('put, head, get with ranges, ETag is the quoted MD5', async (t) => {
  const { store } = fresh(t);
  await store.createBucket(A, 'bk1');
  const body = Buffer.from('hello, local storage');
  const info = await put(store, 'dir/hello.txt', body);
  t.equal(info.etag, `"${createHash('md5').update(body).digest('hex')}"`);
  t.equal(info.size, body.length);
  t.equal(info.replaced_size, 0);
  const head = await store.head({ account: A, bucket: 'bk1', key: 'dir/hello.txt' });
  const { replaced_size: _r, ...stored } = info;
  t.same(head, stored);
  t.equal((await put(store, 'dir/hello.txt', 'shorter')).replaced_size, body.length, 'a replacing put reports what it replaced');
  await put(store, 'dir/hello.txt', body);
  const whole = await store.get({ account: A, bucket: 'bk1', key: 'dir/hello.txt' });
  t.ok(whole && 'body' in whole);
  if (whole && 'body' in whole) t.same(await buffer(whole.body), body);
  const part = await store.get({ account: A, bucket: 'bk1', key: 'dir/hello.txt', range: { start: 7, end: 11 } });
  if (part && 'body' in part) t.equal((await buffer(part.body)).toString(), 'local');
  else t.fail('range get');
  const tail = await store.get({ account: A, bucket: 'bk1', key: 'dir/hello.txt', range: { suffix: 7 } });
  if (tail && 'body' in tail) t.equal((await buffer(tail.body)).toString(), 'storage');
  else t.fail('suffix get');
  t.same(await store.get({ account: A, bucket: 'bk1', key: 'dir/hello.txt', range: { start: 100 } }), { unsatisfiable: true, size: body.length });
  t.equal(await store.get({ account: A, bucket: 'bk1', key: 'nope' }), null);
});

t.test('keys that are a file and a directory prefix coexist; case and long segments are safe', async (t) => {
  const { store } = fresh(t);
  const long = 'é'.repeat(300); // 600 bytes, 1800 escaped characters: split over several names
  const keys = ['a', 'a/b', 'A', 'a/b/c.txt', `x/${long}/y`, 'sp ace/q?u#e%ry', '.hidden/..x', 'a.o', 'a.d'];
  for (const k of keys) await put(store, k, `v:${k}`);
  for (const k of keys) {
    const g = await store.get({ account: A, bucket: 'bk1', key: k });
    if (g && 'body' in g) t.equal((await buffer(g.body)).toString(), `v:${k}`, k);
    else t.fail(k);
  }
  const listed = await store.list({ account: A, bucket: 'bk1', prefix: '', limit: 100 });
  t.same(listed.objects.map((o) => o.key), [...keys].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y))));
});

t.test('keys that could escape the bucket are refused before touching the disk', async (t) => {
  const { store, dir } = fresh(t);
  for (const k of ['../x', 'a/../../x', '/abs', 'a//b', 'a/', '', 'a\u0000b', 'x'.repeat(1025)]) {
    await t.rejects(put(store, k, 'no'), /local-storage: key/, JSON.stringify(k.slice(0, 20)));
  }
  await t.rejects(put(store, 'ok', 'no', '../evil'), /invalid bucket/);
  t.same(readdirSync(dir), []);
});

t.test('list: prefix, delimiter and pages', async (t) => {
  const { store } = fresh(t);
  for (const k of ['p/1', 'p/2', 'p/sub/3', 'p/sub/4', 'q/5']) await put(store, k, k);
  const page1 = await store.list({ account: A, bucket: 'bk1', prefix: 'p/', delimiter: '/', limit: 2 });
  t.same(page1.objects.map((o) => o.key), ['p/1', 'p/2']);
  t.ok(page1.truncated);
  const page2 = await store.list({ account: A, bucket: 'bk1', prefix: 'p/', delimiter: '/', limit: 2, after: page1.last });
  t.same(page2.objects, []);
  t.same(page2.prefixes, ['p/sub/']);
  t.notOk(page2.truncated);
  const flat = await store.list({ account: A, bucket: 'bk1', prefix: 'p/s', limit: 1, after: 'p/sub/3' });
  t.same(flat.objects.map((o) => o.key), ['p/sub/4']);
});

t.test('overwrite leaves one data file; delete removes files and empty directories; failed puts leave nothing', async (t) => {
  const { store, dir } = fresh(t);
  await store.createBucket(A, 'bk1');
  await Promise.all(Array.from({ length: 8 }, (_, i) => put(store, 'k/v', `version ${i}`)));
  const files = (await allFiles(dir)).filter((f) => !f.includes('.tmp'));
  t.equal(files.length, 1, 'a small object is one file: metadata and bytes');
  const failing = new Readable({ read() { this.push(Buffer.alloc(1000)); this.destroy(new Error('client went away')); } });
  await t.rejects(store.put({ account: A, bucket: 'bk1', key: 'k/v', body: failing, content_type: 'x/y' }), /client went away/);
  const g = await store.get({ account: A, bucket: 'bk1', key: 'k/v' });
  if (g && 'body' in g) t.match((await buffer(g.body)).toString(), /^version \d$/);
  t.equal(await store.delete({ account: A, bucket: 'bk1', key: 'k/v' }), true);
  t.equal(await store.delete({ account: A, bucket: 'bk1', key: 'k/v' }), false);
  t.same(await allFiles(dir), []);
  t.equal(await store.deleteBucket(A, 'bk1'), true);
});

t.test('objects past the inline size get a data file; replacing one kind by the other leaves one object', async (t) => {
  const { store, dir } = fresh(t);
  const big = Buffer.alloc(INLINE_MAX + 1, 1).map((_, i) => i % 251);
  const live = async () => (await allFiles(dir)).filter((f) => !f.includes('.tmp')).map((f) => f.slice(f.lastIndexOf('/') + 1).replace(/\.[0-9a-z]+\.v$/, '.V'));
  const info = await put(store, 'k', big);
  t.equal(info.etag, `"${createHash('md5').update(big).digest('hex')}"`);
  t.same((await live()).sort(), ['k.V', 'k.o'], 'metadata file and data file');
  const part = await store.get({ account: A, bucket: 'bk1', key: 'k', range: { start: INLINE_MAX - 2 } });
  if (part && 'body' in part) t.same(await buffer(part.body), big.subarray(INLINE_MAX - 2));
  else t.fail('range of a large object');
  t.equal((await put(store, 'k', 'small now')).replaced_size, big.length);
  t.same(await live(), ['k.o'], 'the data file went with the large version');
  const tail = await store.get({ account: A, bucket: 'bk1', key: 'k', range: { suffix: 3 } });
  if (tail && 'body' in tail) t.equal((await buffer(tail.body)).toString(), 'now');
  else t.fail('range of an inline object');
  t.equal((await put(store, 'k', big)).replaced_size, 9);
  t.same((await live()).sort(), ['k.V', 'k.o']);
  const empty = await put(store, 'e', '');
  t.equal(empty.size, 0);
  const g = await store.get({ account: A, bucket: 'bk1', key: 'e' });
  if (g && 'body' in g) t.equal((await buffer(g.body)).length, 0);
  else t.fail('empty object');
  t.same((await store.list({ account: A, bucket: 'bk1', prefix: '', limit: 10 })).objects.map((o) => [o.key, o.size]), [['e', 0], ['k', big.length]]);
});

t.test('a bucket with objects is not deleted', async (t) => {
  const { store } = fresh(t);
  await put(store, 'x', 'y');
  t.equal(await store.deleteBucket(A, 'bk1'), false);
  t.ok(await store.head({ account: A, bucket: 'bk1', key: 'x' }));
});

t.test('small puts in batches (small-writer): many at once, one key raced, a directory pruned behind the store\'s back', async (t) => {
  for (const fsync of [true, false]) {
    const dir = mkdtempSync(join(tmpdir(), 'svc-ls-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const store = new FileStore(new Layout(dir), { fsync });
    await store.createBucket(A, 'bk1');
    await put(store, 'many/first', 'makes the directory');
    const infos = await Promise.all(Array.from({ length: 200 }, (_, i) => put(store, `many/k${i}`, `body ${i}`)));
    t.same(infos.map((x) => x.replaced_size), Array(200).fill(0), `${fsync}: new keys replace nothing`);
    const bodies = await Promise.all(Array.from({ length: 200 }, async (_, i) => {
      const g = await store.get({ account: A, bucket: 'bk1', key: `many/k${i}` });
      return g && 'body' in g ? (await buffer(g.body)).toString() : null;
    }));
    t.same(bodies, Array.from({ length: 200 }, (_, i) => `body ${i}`), `${fsync}: every object reads back`);

    // Twenty puts of one key at once: each replaces exactly the version before it.
    const raced = await Promise.all(Array.from({ length: 20 }, (_, i) => put(store, 'many/same', 'x'.repeat(i + 1))));
    const stored = raced.reduce((sum, x) => sum + x.size - x.replaced_size!, 0);
    const last = await store.head({ account: A, bucket: 'bk1', key: 'many/same' });
    t.equal(stored, last!.size, `${fsync}: the sizes replaced add up to the one object left`);

    rmSync(join(dir, 'objects', A, 'bk1', 'many.d'), { recursive: true });
    const again = await put(store, 'many/after', 'after the directory went');
    t.equal(again.replaced_size, 0);
    const g = await store.get({ account: A, bucket: 'bk1', key: 'many/after' });
    t.equal(g && 'body' in g ? (await buffer(g.body)).toString() : null, 'after the directory went', `${fsync}: a pruned directory is made again`);
    t.same(readdirSync(join(dir, 'objects', A, 'bk1', '.tmp')), [], `${fsync}: no temp file left`);
  }
});
