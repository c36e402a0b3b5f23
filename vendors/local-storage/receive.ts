import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';

/** Bodies up to this size are kept in memory and stored inline with their metadata. */
export const INLINE_MAX = 64 * 1024;
const WRITE_BATCH = 1024 * 1024;

export interface Received {
  size: number;
  md5: string;
  /** The whole body, when it was small enough to keep (no file was opened). */
  inline?: Buffer[];
}

/**
 * Read a body, hashing it in the same pass. Up to INLINE_MAX bytes it stays in memory;
 * past that the file is opened (`file.open()`) and chunks are gathered while the previous
 * batch is written (one writev a batch, one write in flight), so the disk and the network
 * overlap without a Transform or a WriteStream in between. With `syncEvery`, the file is
 * also synced each time that many bytes have been written.
 */
export async function receive(body: Readable, file: { open(): Promise<FileHandle> }, o: { syncEvery?: number } = {}): Promise<Received> {
  const md5 = createHash('md5');
  let size = 0;
  let batch: Buffer[] = [];
  let batchBytes = 0;
  let fh: FileHandle | undefined;
  let inflight: Promise<void> | undefined;
  let unsynced = 0;
  const flush = async () => {
    fh ??= await file.open();
    await inflight; // writes go in order: one at a time at the file's position
    unsynced += batchBytes;
    // Syncing as the body arrives (in the background of the next batch) leaves little for
    // the final sync, which the client would otherwise wait for after its last byte.
    const sync = o.syncEvery !== undefined && unsynced >= o.syncEvery;
    if (sync) unsynced = 0;
    const handle = fh;
    const p = writeAll(handle, batch).then(() => (sync ? handle.datasync() : undefined));
    p.catch(() => undefined); // awaited later; not an unhandled rejection meanwhile
    inflight = p;
    batch = [];
    batchBytes = 0;
  };
  for await (const chunk of body as AsyncIterable<Buffer>) {
    md5.update(chunk);
    size += chunk.length;
    batch.push(chunk);
    batchBytes += chunk.length;
    if (batchBytes >= WRITE_BATCH) await flush();
  }
  if (!fh && size <= INLINE_MAX) return { size, md5: md5.digest('hex'), inline: batch };
  if (batch.length) await flush();
  await inflight;
  return { size, md5: md5.digest('hex') };
}

async function writeAll(fh: FileHandle, chunks: Buffer[]): Promise<void> {
  let { bytesWritten } = await fh.writev(chunks);
  const total = chunks.reduce((n, c) => n + c.length, 0);
  if (bytesWritten === total) return;
  // A short write (rare on regular files): write what is left, one buffer.
  const rest = Buffer.concat(chunks).subarray(bytesWritten);
  for (let off = 0; off < rest.length; off += bytesWritten) ({ bytesWritten } = await fh.write(rest, off));
}
