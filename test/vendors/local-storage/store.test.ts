import t from 'tap';
import { existsSync, mkdirSync, mkdtempSync, rmSync, readdirSync, writeFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { Layout } from '../../../vendors/local-storage/layout.js';
import { FileStore } from '../../../vendors/local-storage/store.js';
import { INLINE_MAX } from '../../../vendors/local-storage/receive.js';
import { A, fresh, put } from '../../helpers/local-store.js';

async function allFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile()) out.push(join((e as any).parentPath ?? (e as any).path, e.name));
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
  t.equal(
    (await put(store, 'dir/hello.txt', 'shorter')).replaced_size,
    body.length,
    'a replacing put reports what it replaced'
  );
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
  t.same(await store.get({ account: A, bucket: 'bk1', key: 'dir/hello.txt', range: { start: 100 } }), {
    unsatisfiable: true,
    size: body.length,
  });
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
  t.same(
    listed.objects.map((o) => o.key),
    [...keys].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)))
  );
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
  t.same(
    page1.objects.map((o) => o.key),
    ['p/1', 'p/2']
  );
  t.ok(page1.truncated);
  const page2 = await store.list({
    account: A,
    bucket: 'bk1',
    prefix: 'p/',
    delimiter: '/',
    limit: 2,
    after: page1.last,
  });
  t.same(page2.objects, []);
  t.same(page2.prefixes, ['p/sub/']);
  t.notOk(page2.truncated);
  const flat = await store.list({ account: A, bucket: 'bk1', prefix: 'p/s', limit: 1, after: 'p/sub/3' });
  t.same(
    flat.objects.map((o) => o.key),
    ['p/sub/4']
  );
});

/** Files of objects: everything but the index and temp files. */
async function objectFiles(dir: string): Promise<string[]> {
  return (await allFiles(dir)).filter((f) => !f.includes('/.tmp/') && !/\/index\.db(-wal|-shm)?$/.test(f));
}

t.test('overwrite keeps one object; delete removes it and its files; failed puts leave nothing', async (t) => {
  const { store, dir } = fresh(t);
  await store.createBucket(A, 'bk1');
  await Promise.all(Array.from({ length: 8 }, (_, i) => put(store, 'k/v', `version ${i}`)));
  t.same(await objectFiles(dir), [], 'a small object is a row of the index: no file of its own');
  const failing = new Readable({
    read() {
      this.push(Buffer.alloc(1000));
      this.destroy(new Error('client went away'));
    },
  });
  await t.rejects(
    store.put({ account: A, bucket: 'bk1', key: 'k/v', body: failing, content_type: 'x/y' }),
    /client went away/
  );
  const bigFailing = new Readable({
    read() {
      this.push(Buffer.alloc(INLINE_MAX + 10));
      this.destroy(new Error('client went away'));
    },
  });
  await t.rejects(
    store.put({ account: A, bucket: 'bk1', key: 'k/v', body: bigFailing, content_type: 'x/y' }),
    /client went away/
  );
  t.same(readdirSync(join(dir, 'objects', A, 'bk1', '.tmp')), [], 'the failed large put left no temp file');
  const g = await store.get({ account: A, bucket: 'bk1', key: 'k/v' });
  if (g && 'body' in g) t.match((await buffer(g.body)).toString(), /^version \d$/);
  else t.fail('the object survived the failed puts');
  t.equal(await store.delete({ account: A, bucket: 'bk1', key: 'k/v' }), true);
  t.equal(await store.delete({ account: A, bucket: 'bk1', key: 'k/v' }), false);
  t.equal(await store.head({ account: A, bucket: 'bk1', key: 'k/v' }), null);
  t.same(await objectFiles(dir), []);
  t.equal(await store.deleteBucket(A, 'bk1'), true);
});

t.test('objects past the inline size get a data file; replacing one kind by the other leaves one object', async (t) => {
  const { store, dir } = fresh(t);
  const big = Buffer.alloc(INLINE_MAX + 1, 1).map((_, i) => i % 251);
  const live = async () =>
    (await objectFiles(dir)).map((f) => f.slice(f.lastIndexOf('/') + 1).replace(/\.[0-9a-z]+\.v$/, '.V'));
  const info = await put(store, 'd/k', big);
  t.equal(info.etag, `"${createHash('md5').update(big).digest('hex')}"`);
  t.same(await live(), ['k.V'], 'a data file, named by the key');
  const part = await store.get({ account: A, bucket: 'bk1', key: 'd/k', range: { start: INLINE_MAX - 2 } });
  if (part && 'body' in part) t.same(await buffer(part.body), big.subarray(INLINE_MAX - 2));
  else t.fail('range of a large object');
  t.equal((await put(store, 'd/k', 'small now')).replaced_size, big.length);
  t.same(await live(), [], 'the data file went with the large version');
  t.notOk(existsSync(join(dir, 'objects', A, 'bk1', 'd.d')), 'and its emptied key directory');
  const tail = await store.get({ account: A, bucket: 'bk1', key: 'd/k', range: { suffix: 3 } });
  if (tail && 'body' in tail) t.equal((await buffer(tail.body)).toString(), 'now');
  else t.fail('range of an inline object');
  t.equal((await put(store, 'd/k', big)).replaced_size, 9);
  t.equal((await put(store, 'd/k', big)).replaced_size, big.length);
  t.same(await live(), ['k.V'], 'a large object replaced by another leaves one data file');
  const empty = await put(store, 'e', '');
  t.equal(empty.size, 0);
  const g = await store.get({ account: A, bucket: 'bk1', key: 'e' });
  if (g && 'body' in g) t.equal((await buffer(g.body)).length, 0);
  else t.fail('empty object');
  t.same(
    (await store.list({ account: A, bucket: 'bk1', prefix: '', limit: 10 })).objects.map((o) => [o.key, o.size]),
    [
      ['d/k', big.length],
      ['e', 0],
    ]
  );
  t.equal(await store.delete({ account: A, bucket: 'bk1', key: 'd/k' }), true);
  t.same(await live(), [], 'deleting a large object frees its data file');
});

t.test('a bucket with objects is not deleted', async (t) => {
  const { store } = fresh(t);
  await put(store, 'x', 'y');
  t.equal(await store.deleteBucket(A, 'bk1'), false);
  t.ok(await store.head({ account: A, bucket: 'bk1', key: 'x' }));
  t.equal(await store.deleteBucket(A, 'other'), true, 'another bucket of the account is not held by it');
  t.equal(await store.deleteBucket('acct_test2', 'bk1'), true, "nor another account's bucket of the same name");
});

t.test("puts in batches: many at once, one key raced, a directory pruned behind the store's back", async (t) => {
  for (const fsync of [true, false]) {
    const dir = mkdtempSync(join(tmpdir(), 'svc-ls-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const store = new FileStore(new Layout(dir), { fsync });
    t.teardown(() => store.close());
    await store.createBucket(A, 'bk1');
    const infos = await Promise.all(Array.from({ length: 200 }, (_, i) => put(store, `many/k${i}`, `body ${i}`)));
    t.same(
      infos.map((x) => x.replaced_size),
      Array(200).fill(0),
      `${fsync}: new keys replace nothing`
    );
    const bodies = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const g = await store.get({ account: A, bucket: 'bk1', key: `many/k${i}` });
        return g && 'body' in g ? (await buffer(g.body)).toString() : null;
      })
    );
    t.same(
      bodies,
      Array.from({ length: 200 }, (_, i) => `body ${i}`),
      `${fsync}: every object reads back`
    );

    // Twenty puts of one key at once, small and large mixed: each replaces exactly the version before it.
    const raced = await Promise.all(
      Array.from({ length: 20 }, (_, i) => put(store, 'many/same', 'x'.repeat(i % 3 ? i + 1 : INLINE_MAX + i)))
    );
    const stored = raced.reduce((sum, x) => sum + x.size - x.replaced_size!, 0);
    const last = await store.head({ account: A, bucket: 'bk1', key: 'many/same' });
    t.equal(stored, last!.size, `${fsync}: the sizes replaced add up to the one object left`);
    t.ok((await objectFiles(dir)).length <= 1, `${fsync}: at most the one data file of the object left`);

    await put(store, 'deep/er/big', Buffer.alloc(INLINE_MAX + 1));
    rmSync(join(dir, 'objects', A, 'bk1', 'deep.d'), { recursive: true });
    const again = await put(store, 'deep/er/after', Buffer.alloc(INLINE_MAX + 2, 3));
    t.equal(again.replaced_size, 0);
    const g = await store.get({ account: A, bucket: 'bk1', key: 'deep/er/after' });
    t.same(
      g && 'body' in g ? await buffer(g.body) : null,
      Buffer.alloc(INLINE_MAX + 2, 3),
      `${fsync}: a pruned directory is made again`
    );
    t.same(readdirSync(join(dir, 'objects', A, 'bk1', '.tmp')), [], `${fsync}: no temp file left`);
  }
});

t.test('objects outlive the store: a new one on the same directory reads them', async (t) => {
  const { store, dir } = fresh(t);
  await put(store, 'small', 'kept');
  await put(store, 'large', Buffer.alloc(INLINE_MAX + 5, 9));
  await store.close();
  const reopened = new FileStore(new Layout(dir));
  t.teardown(() => reopened.close());
  const small = await reopened.get({ account: A, bucket: 'bk1', key: 'small' });
  t.equal(small && 'body' in small ? (await buffer(small.body)).toString() : null, 'kept');
  const large = await reopened.get({ account: A, bucket: 'bk1', key: 'large' });
  t.same(large && 'body' in large ? await buffer(large.body) : null, Buffer.alloc(INLINE_MAX + 5, 9));
});

t.test('a store written before the index (a metadata file an object) is imported on first open', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-ls-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // The layout of earlier versions: `<key>.o` is JSON, then for a small object "\n" and its bytes;
  // a large object's bytes are `<key>.<version>.v` beside it.
  const bucketDir = join(dir, 'objects', A, 'old');
  mkdirSync(join(bucketDir, 'a.d'), { recursive: true });
  const meta = (key: string, size: number, version: string, inline: boolean) =>
    JSON.stringify({
      key,
      size,
      etag: '"e"',
      content_type: 'text/plain',
      last_modified: 1_700_000_000_000,
      version,
      ...(inline ? { inline } : {}),
    });
  writeFileSync(join(bucketDir, 'a.d', 'small.o'), `${meta('a/small', 5, 'v1', true)}\nhello`);
  writeFileSync(join(bucketDir, 'big%20one.o'), meta('big one', 7, 'v2', false));
  writeFileSync(join(bucketDir, 'big%20one.v2.v'), 'seven!!');
  const store = new FileStore(new Layout(dir));
  t.teardown(() => store.close());
  const listed = await store.list({ account: A, bucket: 'old', prefix: '', limit: 10 });
  t.same(
    listed.objects.map((o) => [o.key, o.size, o.last_modified]),
    [
      ['a/small', 5, 1_700_000_000_000],
      ['big one', 7, 1_700_000_000_000],
    ]
  );
  const small = await store.get({ account: A, bucket: 'old', key: 'a/small' });
  t.equal(small && 'body' in small ? (await buffer(small.body)).toString() : null, 'hello');
  const big = await store.get({ account: A, bucket: 'old', key: 'big one' });
  t.equal(big && 'body' in big ? (await buffer(big.body)).toString() : null, 'seven!!');
  t.notOk(existsSync(join(bucketDir, 'a.d', 'small.o')), 'the metadata files are gone');
  t.notOk(existsSync(join(bucketDir, 'big%20one.o')));
  t.equal(
    (
      await store.put({
        account: A,
        bucket: 'old',
        key: 'big one',
        body: Readable.from([Buffer.from('x')]),
        content_type: 'text/plain',
      })
    ).replaced_size,
    7
  );
  t.notOk(existsSync(join(bucketDir, 'big%20one.v2.v')), 'replacing an imported large object frees its data file');
});

t.test('list agrees with a sorted model: prefixes, delimiters, pages, multi-byte keys', async (t) => {
  const { store } = fresh(t);
  const keys = [
    'a',
    'a/b',
    'a/b/c',
    'a/b/d',
    'a/c',
    'a-b',
    'a0',
    'b/é/1',
    'b/é/2',
    'b/z',
    'b/\u{10ffff}x',
    'b/\u{10ffff}y',
    'c',
    'é',
    'é/x',
    '\u{1f600}/1',
    '\u{1f600}/2',
    'z/z/z',
  ];
  await Promise.all(keys.map((k) => put(store, k, k)));
  const sorted = [...keys].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
  const model = (prefix: string, delimiter: string | undefined) => {
    const out: string[] = [];
    for (const k of sorted) {
      if (!k.startsWith(prefix)) continue;
      const i = delimiter ? k.indexOf(delimiter, prefix.length) : -1;
      const e = i < 0 ? k : k.slice(0, i + delimiter!.length);
      if (out[out.length - 1] !== e) out.push(e);
    }
    return out;
  };
  for (const prefix of ['', 'a', 'a/', 'b/', 'b/\u{10ffff}', 'é', 'nothing']) {
    for (const delimiter of [undefined, '/', 'b', '\u{10ffff}', 'é']) {
      for (const limit of [1, 2, 3, 100]) {
        const got: string[] = [];
        let after: string | undefined;
        for (let pages = 0; pages < 50; pages++) {
          const page = await store.list({ account: A, bucket: 'bk1', prefix, delimiter, limit, after });
          t.ok(page.objects.length + page.prefixes.length <= limit);
          const entries = [...page.objects.map((o) => o.key), ...page.prefixes].sort((x, y) =>
            Buffer.compare(Buffer.from(x), Buffer.from(y))
          );
          got.push(...entries);
          if (!page.truncated) break;
          after = page.last;
        }
        t.same(
          got,
          model(prefix, delimiter),
          `prefix ${JSON.stringify(prefix)} delimiter ${JSON.stringify(delimiter)} limit ${limit}`
        );
      }
    }
  }
});
