import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { PRIVATE_DIR, PRIVATE_FILE } from '../../core/kit/vendor.js';

export interface KnownLength {
  body: Readable;
  length: number;
  /** Bytes counted as the body is read (equal to `length` once it has been read). */
  counted(): number;
  cleanup(): Promise<void>;
}

/**
 * A body whose length is known up front, as a single S3 PutObject needs: the body itself
 * when the request declared its length, or else the body spooled to a temp file first.
 */
export async function withKnownLength(
  body: Readable,
  length: number | undefined,
  spoolDir: string,
  signal?: AbortSignal
): Promise<KnownLength> {
  let size = 0;
  const count = new Transform({
    transform(c: Buffer, _e, cb) {
      size += c.length;
      cb(null, c);
    },
  });
  if (length !== undefined) {
    body.on('error', (e) => count.destroy(e));
    // The SDK pipes this into its request without listening for errors: a refused body (bad
    // checksum, over the cap) reaches the caller through the abort signal, and must not be an
    // uncaught exception here.
    count.on('error', () => undefined);
    return { body: body.pipe(count), length, counted: () => size, cleanup: async () => undefined };
  }
  await mkdir(spoolDir, { recursive: true, mode: PRIVATE_DIR });
  const file = join(spoolDir, `spool-${randomBytes(8).toString('hex')}`);
  try {
    await pipeline(body, count, createWriteStream(file, { mode: PRIVATE_FILE }), { signal });
  } catch (e) {
    await rm(file, { force: true });
    throw e;
  }
  return { body: createReadStream(file), length: size, counted: () => size, cleanup: () => rm(file, { force: true }) };
}
