// Child process of crash.test.ts: puts objects into a local store until it is killed,
// telling the parent of every put that was answered. Eight writers, each with keys of its
// own (so a key's puts are answered in order), small and large bodies mixed.
import { Readable } from 'node:stream';
import { FileStore } from '../../../vendors/local-storage/store.js';
import { Layout } from '../../../vendors/local-storage/layout.js';
import { INLINE_MAX } from '../../../vendors/local-storage/receive.js';

/** The body of put number `n`: says its own number, so a torn or mixed body shows. */
export function bodyOf(n: number): Buffer {
  const size = n % 5 === 0 ? INLINE_MAX + 1 + (n % 3000) : 16 + (n % 2000);
  const head = Buffer.from(`put ${n};`);
  const out = Buffer.alloc(size, n % 251);
  head.copy(out);
  return out;
}

// Only in the child (the test imports bodyOf from here; tap runs it with an IPC channel too).
const dir = process.env.SVC_CRASH_WRITER_DIR;
if (dir && process.send) {
  const store = new FileStore(new Layout(dir), { fsync: true });
  await store.createBucket('acct_crash', 'crashes');
  let next = 0;
  const writer = async (w: number) => {
    for (let j = 0; ; j++) {
      const n = next++;
      const key = `w${w}/k${j % 10}`;
      const body = bodyOf(n);
      await store.put({
        account: 'acct_crash',
        bucket: 'crashes',
        key,
        body: Readable.from([body]),
        data: body,
        content_type: 'application/octet-stream',
      });
      process.send!({ key, n });
    }
  };
  process.send('ready');
  for (let w = 0; w < 8; w++) void writer(w);
}
