import t from 'tap';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { Layout } from '../../../vendors/local-storage/layout.js';
import { FileStore } from '../../../vendors/local-storage/store.js';
import { INLINE_MAX } from '../../../vendors/local-storage/receive.js';
import { A, fresh, put } from '../../helpers/local-store.js';

// Group commit (group-commit.ts): one sync of the WAL for the puts of a busy moment, and none
// for a put that waives durability.

t.test('group commit: puts at once share the sync of the WAL; without fsync there is none', async (t) => {
  for (const fsync of [true, false]) {
    const dir = mkdtempSync(join(tmpdir(), 'svc-ls-'));
    const store = new FileStore(new Layout(dir), { fsync });
    t.teardown(async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });
    await put(store, 'first', 'x');
    t.equal(store.syncs, fsync ? 1 : 0, `${fsync}: a lone put, one sync`);
    const infos = await Promise.all(Array.from({ length: 100 }, (_, i) => put(store, `k${i}`, `v${i}`)));
    t.equal(infos.length, 100);
    if (fsync) t.ok(store.syncs >= 2 && store.syncs <= 11, `100 puts at once took ${store.syncs - 1} sync(s), not 100`);
    else t.equal(store.syncs, 0);
    // Puts that arrive while a sync runs wait for the next one, which covers them all.
    const waves = await Promise.all(
      Array.from({ length: 5 }, async (_, w) => {
        await new Promise((r) => setImmediate(r));
        return Promise.all(Array.from({ length: 20 }, (_, i) => put(store, `w${w}-${i}`, 'y')));
      })
    );
    t.equal(waves.flat().length, 100);
    const listed = await store.list({ account: A, bucket: 'bk1', prefix: 'w', limit: 200 });
    t.equal(listed.objects.length, 100, `${fsync}: every put committed`);
  }
});

t.test('a put that waives durability (a result) is answered once committed, with no sync of its own', async (t) => {
  const { dir, store } = fresh(t);
  const lax = (key: string, body: Buffer) =>
    store.put({ account: A, bucket: 'bk1', key, body: Readable.from([body]), content_type: 'x/y', durable: false });
  await put(store, 'first', 'x');
  const before = store.syncs;
  t.equal(before, 1, 'a durable put syncs');
  await lax('small', Buffer.from('inline'));
  await lax('large', Buffer.alloc(INLINE_MAX + 10, 5));
  t.equal(store.syncs, before, 'neither an inline nor a file put waited for a sync');
  for (const [key, size] of [
    ['small', 6],
    ['large', INLINE_MAX + 10],
  ] as const) {
    const g = await store.get({ account: A, bucket: 'bk1', key });
    t.equal(g && 'body' in g ? (await buffer(g.body)).length : -1, size, `${key} is committed and readable`);
  }
  await put(store, 'after', 'y');
  t.equal(store.syncs, before + 1, 'the next durable put syncs the WAL, the lax ones included');
  t.ok(existsSync(join(dir, 'objects')), 'the store is on disk');
});
