import { closeSync, existsSync, fdatasync, open, readFile, readFileSync, writevSync } from 'node:fs';

// Small files, written and read with as few trips to libuv's thread pool as possible. Node
// runs each asynchronous fs call on a pool thread: a handoff there and back (futex wake-ups,
// an eventfd write, an epoll wake-up) costs more CPU than creating, writing and closing a
// 1 KiB file in the page cache. So small objects do the writes, the close and the commit
// on the event loop; what can wait on the device or the journal goes to the pool.

/**
 * Create `path` (it must not exist), write `chunks`, sync its data when asked, close. The
 * create and the sync go to the pool: creating a file takes a journal handle, which waits
 * while the journal commits (another object's sync), and that wait must not stop the loop.
 */
export async function writeNewFile(path: string, chunks: Buffer[], sync: boolean): Promise<void> {
  const fd = await new Promise<number>((resolve, reject) => open(path, 'wx', (e, n) => (e ? reject(e) : resolve(n))));
  try {
    let rest = chunks;
    for (;;) {
      const n = writevSync(fd, rest);
      const total = rest.reduce((s, b) => s + b.length, 0);
      if (n >= total) break;
      rest = [Buffer.concat(rest).subarray(n)]; // a short write (rare on regular files)
    }
    if (sync) await new Promise<void>((resolve, reject) => fdatasync(fd, (e) => (e ? reject(e) : resolve())));
  } finally {
    closeSync(fd);
  }
}

/** The whole file, or null when it does not exist (no exception thrown for the usual miss). */
export function readSmallFileSync(path: string): Buffer | null {
  if (!existsSync(path)) return null;
  try {
    return readFileSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw e;
  }
}

/** The whole file, or null when it does not exist. */
export function readWholeFile(path: string): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    readFile(path, (err, data) => {
      if (!err) return resolve(data);
      if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return resolve(null);
      reject(err);
    });
  });
}
