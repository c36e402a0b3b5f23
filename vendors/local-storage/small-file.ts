import { close, fdatasync, open, readFile, writev } from 'node:fs';

// Small files through fs's callback API: each call is one libuv request, where fs/promises
// adds a FileHandle (with its finalizer), and writeFile a stat and several promises, to
// every call. For 1 KiB objects that overhead was a good part of a put.

/** Create `path` (it must not exist), write `chunks`, sync the data when asked, close. */
export function writeNewFile(path: string, chunks: Buffer[], sync: boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    open(path, 'wx', (err, fd) => {
      if (err) return reject(err);
      const finish = (e: NodeJS.ErrnoException | null) => close(fd, (ce) => (e ?? ce ? reject(e ?? ce) : resolve()));
      const synced = () => (sync ? fdatasync(fd, finish) : finish(null));
      const write = (bufs: Buffer[]) => writev(fd, bufs, (we, n) => {
        if (we) return finish(we);
        const total = bufs.reduce((s, b) => s + b.length, 0);
        // A short write (rare on regular files): write what is left.
        if (n < total) return write([Buffer.concat(bufs).subarray(n)]);
        synced();
      });
      write(chunks);
    });
  });
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
