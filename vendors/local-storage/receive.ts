import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { OffThreadMd5 } from './md5-worker.js';

/** Bodies up to this size are kept in memory and stored inline with their metadata. */
export const INLINE_MAX = 64 * 1024;
const WRITE_BATCH = 1024 * 1024;

export interface Received {
  size: number;
  md5: string;
  /** The whole body, when it was small enough to keep (no file was opened). */
  inline?: Buffer[];
}

const md5Of = (chunks: Buffer[]) => chunks.reduce((h, c) => h.update(c), createHash('md5')).digest('hex');

/**
 * Read a body and hash it. Up to INLINE_MAX bytes it stays in memory; past that the file is
 * opened (`file.open()`) and chunks are gathered while the previous batch is written (one
 * writev a batch, one write in flight), so the disk and the network overlap without a
 * Transform or a WriteStream in between. Bodies of more than one batch are hashed on the
 * MD5 worker thread, beside the event loop. With `syncEvery`, a sync of what is written
 * starts each time that many bytes have gone out (one at a time, not waited for until the
 * end), so little is left for the final sync the client waits for after its last byte.
 */
export async function receive(
  body: Readable,
  file: { open(): Promise<FileHandle> },
  o: { syncEvery?: number } = {}
): Promise<Received> {
  let size = 0;
  let batch: Buffer[] = [];
  let batchBytes = 0;
  let fh: FileHandle | undefined;
  let md5: OffThreadMd5 | undefined;
  let inflight: Promise<void> | undefined;
  let syncing: Promise<void> | undefined;
  let syncBusy = false;
  let unsynced = 0;
  const flush = async (last: boolean) => {
    fh ??= await file.open();
    // Only a body of several batches is worth the worker; a single one is hashed here.
    if (!(last && !md5)) await (md5 ??= new OffThreadMd5()).update(batch);
    await inflight; // writes go in order: one at a time at the file's position
    if (o.syncEvery !== undefined && unsynced >= o.syncEvery && !syncBusy) {
      syncBusy = true;
      unsynced = 0;
      syncing = fh.datasync().finally(() => (syncBusy = false));
      syncing.catch(() => undefined); // awaited at the end
    }
    unsynced += batchBytes;
    const p = writeAll(fh, batch);
    p.catch(() => undefined); // awaited later; not an unhandled rejection meanwhile
    inflight = p;
    batch = [];
    batchBytes = 0;
  };
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      size += chunk.length;
      batch.push(chunk);
      batchBytes += chunk.length;
      if (batchBytes >= WRITE_BATCH) await flush(false);
    }
    if (!fh && size <= INLINE_MAX) return { size, md5: md5Of(batch), inline: batch };
    const here = md5 ? undefined : md5Of(batch);
    if (batch.length || !fh) await flush(true);
    await inflight;
    await syncing;
    return { size, md5: here ?? (await md5!.digest()) };
  } catch (e) {
    md5?.drop();
    throw e;
  }
}

async function writeAll(fh: FileHandle, chunks: Buffer[]): Promise<void> {
  let { bytesWritten } = await fh.writev(chunks);
  const total = chunks.reduce((n, c) => n + c.length, 0);
  if (bytesWritten === total) return;
  // A short write (rare on regular files): write what is left, one buffer.
  const rest = Buffer.concat(chunks).subarray(bytesWritten);
  for (let off = 0; off < rest.length; off += bytesWritten) ({ bytesWritten } = await fh.write(rest, off));
}
