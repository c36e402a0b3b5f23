import { hash, randomBytes } from 'node:crypto';
import { mkdir, open, type FileHandle, rename, rm, rmdir, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Readable, addAbortSignal } from 'node:stream';
import { INLINE_MAX, receive } from './receive.js';
import { ObjectIndex } from './object-index.js';
import type { ObjectRow } from './object-row.js';
import type { Replaced } from './group-commit.js';
import {
  type ConditionFailed,
  type GetInput,
  type GetOutput,
  type ListInput,
  type ListOutput,
  type ObjectInfo,
  type ObjectRef,
  type PutInput,
  type PutOutput,
  type WriteCondition,
  resolveRange,
  compareKeys,
  rolledUp,
  PRIVATE_DIR,
  PRIVATE_FILE,
} from '../../core/kit/vendor.js';
import type { Layout } from './layout.js';
import { closeInstance, openInstance, sweepTempFiles, tempName } from './temp-sweep.js';

/** Large bodies are synced every this many bytes as they arrive (see `receive`). */
const SYNC_EVERY = 16 * 1024 * 1024;

function isNotFound(e: unknown): boolean {
  const code = (e as { code?: string }).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * Objects on the local disk, committed in an index (object-index.ts). A small object (up to
 * INLINE_MAX bytes) is its row: no file of its own. A large one streams into a temp file in
 * the bucket's `.tmp` directory (same file system, so the rename is atomic), is synced,
 * renamed to a data file named by its key and version, and then committed by its row. A
 * reader sees the old object or the new one, never a torn one; a crash leaves at worst an
 * unreferenced data file. One gateway node is what local storage is for (clusters use an
 * S3-compatible vendor); several processes on one data dir are safe (SQLite's locks).
 */
export class FileStore {
  private readonly fsync: boolean;
  private readonly index: ObjectIndex;
  /** Directories known to exist, so a large put does not mkdir each time. */
  private readonly dirs = new Set<string>();

  private readonly instance = randomBytes(4).toString('hex');
  private counter = 0;

  /** The sweep of temp files that crashed writers left (temp-sweep.ts), started when the store opens: how many went. */
  readonly swept: Promise<number>;

  constructor(
    readonly layout: Layout,
    opts: { fsync?: boolean } = {}
  ) {
    this.fsync = opts.fsync ?? true;
    this.index = new ObjectIndex(layout.root, this.fsync);
    openInstance(this.instance);
    this.swept = sweepTempFiles(layout.root);
    this.swept.catch(() => undefined); // awaited by whoever wants to know (the vendor logs it)
  }

  async createBucket(account: string, bucket: string): Promise<void> {
    await this.ensureDir(this.layout.tmpDir(account, bucket));
  }

  private async ensureDir(dir: string): Promise<void> {
    if (this.dirs.has(dir)) return;
    await mkdir(dir, { recursive: true, mode: PRIVATE_DIR });
    if (this.dirs.size > 10_000) this.dirs.clear();
    this.dirs.add(dir);
  }

  /** Rename, making the target's directory when it is missing (a delete may have pruned it). */
  private async renameInto(from: string, to: string): Promise<void> {
    for (let i = 0; ; i++) {
      await this.ensureDir(dirname(to));
      try {
        await rename(from, to);
        return;
      } catch (e) {
        if (!isNotFound(e) || i >= 3) throw e;
        this.dirs.delete(dirname(to));
      }
    }
  }

  /** Remove a bucket with no objects; false when it still has some. */
  async deleteBucket(account: string, bucket: string): Promise<boolean> {
    const dir = this.layout.bucketDir(account, bucket);
    if (this.index.hasObjects(account, bucket)) return false;
    await rm(dir, { recursive: true, force: true });
    for (const d of this.dirs) if (d === dir || d.startsWith(`${dir}/`)) this.dirs.delete(d);
    return true;
  }

  async head(ref: ObjectRef): Promise<ObjectInfo | null> {
    this.layout.check(ref.account, ref.bucket, ref.key); // refuses a bad key, as every operation does
    const row = this.index.info(ref.account, ref.bucket, ref.key);
    return row ? info(row) : null;
  }

  /**
   * Store an object. With a `condition` (S3's If-None-Match: * or If-Match), the condition is
   * checked in the transaction that commits the row, so of two racing writers one wins; a
   * put whose condition fails stores nothing and says why.
   */
  async put(
    input: PutInput & { condition?: WriteCondition },
    signal?: AbortSignal
  ): Promise<PutOutput | ConditionFailed> {
    // A small object needs no path: only a large one becomes a file.
    this.layout.check(input.account, input.bucket, input.key);
    const version = this.nextName();
    const sync = this.fsync && input.durable !== false;
    let tmp: string | undefined;
    let fh: FileHandle | undefined;
    let dataFile: string | undefined;
    try {
      // Bytes the caller already holds (a small upload) are taken as they are: no stream.
      const got =
        input.data && input.data.length <= INLINE_MAX
          ? { size: input.data.length, md5: hash('md5', input.data, 'hex'), inline: [input.data] }
          : await receive(
              signal ? addAbortSignal(signal, input.body) : input.body,
              {
                open: async () => {
                  tmp = join(this.layout.tmpDir(input.account, input.bucket), tempName(this.instance, version));
                  await this.ensureDir(dirname(tmp));
                  return (fh = await open(tmp, 'wx', PRIVATE_FILE));
                },
              },
              { syncEvery: sync ? SYNC_EVERY : undefined }
            );
      const row = {
        key: input.key,
        size: got.size,
        etag: input.etag ?? `"${got.md5}"`,
        content_type: input.content_type,
        last_modified: Date.now(),
        version,
      };
      if (!got.inline) {
        if (sync) await fh!.datasync();
        await fh!.close();
        fh = undefined;
        dataFile = `${this.layout.objectPaths(input.account, input.bucket, input.key).stem}.${version}.v`;
        await this.renameInto(tmp!, dataFile);
      }
      const data = got.inline ? (got.inline.length === 1 ? got.inline[0] : Buffer.concat(got.inline)) : null;
      const done = await this.index.apply(
        {
          kind: 'put',
          account: input.account,
          bucket: input.bucket,
          ...row,
          data,
          condition: input.condition,
        },
        sync
      );
      if (done.failed) {
        if (dataFile) await rm(dataFile, { force: true });
        return { precondition_failed: done.failed };
      }
      dataFile = undefined; // committed: the row owns it now
      await this.freeReplaced(input, done.was);
      return { ...info(row), replaced_size: done.was?.size ?? 0 };
    } catch (e) {
      await fh?.close().catch(() => undefined);
      if (tmp) await rm(tmp, { force: true });
      if (dataFile) await rm(dataFile, { force: true });
      throw e;
    }
  }

  /** After a commit: free the data file of the large object replaced or deleted, and prune its directories. */
  private async freeReplaced(ref: ObjectRef, was: Replaced | null): Promise<void> {
    if (!was || was.inline) return;
    const paths = this.layout.objectPaths(ref.account, ref.bucket, ref.key);
    await unlink(`${paths.stem}.${was.version}.v`).catch(() => undefined);
    // Empty key directories go, up to (not including) the bucket directory.
    const stop = this.layout.bucketDir(ref.account, ref.bucket);
    for (let dir = paths.dir; dir !== stop && dir.startsWith(stop); dir = dirname(dir)) {
      try {
        await rmdir(dir);
        this.dirs.delete(dir);
      } catch {
        break;
      }
    }
  }

  /** A name unique in this process and across restarts, cheaper than random bytes per put. */
  private nextName(): string {
    return `${Date.now().toString(36)}${this.instance}${(this.counter++).toString(36)}`;
  }

  async get(input: GetInput): Promise<GetOutput | null | { unsatisfiable: true; size: number }> {
    this.layout.check(input.account, input.bucket, input.key);
    // A put may replace the data file between reading the row and opening the file: read again.
    for (let attempt = 0; attempt < 5; attempt++) {
      const row: ObjectRow | undefined = this.index.row(input.account, input.bucket, input.key);
      if (!row) return null;
      const r = resolveRange(input.range, row.size);
      if (!r) return { unsatisfiable: true, size: row.size };
      if (row.data)
        return {
          ...info(row),
          body: Readable.from(row.size ? [row.data.subarray(r.start, r.end + 1)] : []),
          start: r.start,
          end: r.end,
        };
      let fh;
      try {
        fh = await open(
          `${this.layout.objectPaths(input.account, input.bucket, input.key).stem}.${row.version}.v`,
          'r'
        );
      } catch (e) {
        if (isNotFound(e)) continue;
        throw e;
      }
      if (row.size === 0) {
        await fh.close();
        return { ...info(row), body: Readable.from([]), start: 0, end: -1 };
      }
      const body = fh.createReadStream({ start: r.start, end: r.end, highWaterMark: 256 * 1024 });
      return { ...info(row), body, start: r.start, end: r.end };
    }
    throw new Error('local-storage: object kept changing while it was being read');
  }

  /** Delete an object: whether there was one, or, with a condition that failed, why nothing was deleted. */
  async delete(ref: ObjectRef & { condition?: WriteCondition }): Promise<boolean | ConditionFailed> {
    this.layout.check(ref.account, ref.bucket, ref.key);
    const done = await this.index.apply({
      kind: 'delete',
      account: ref.account,
      bucket: ref.bucket,
      key: ref.key,
      condition: ref.condition,
    });
    if (done.failed) return { precondition_failed: done.failed };
    await this.freeReplaced(ref, done.was);
    return !!done.was;
  }

  async list(input: ListInput): Promise<ListOutput> {
    this.layout.bucketDir(input.account, input.bucket);
    const objects: ObjectInfo[] = [];
    const prefixes: string[] = [];
    let truncated = false;
    let last: string | undefined;
    const { prefix, delimiter, after } = input;
    // Where the scan starts: at the prefix, or past `after`; past everything under it when it
    // is (or lies under) a common prefix, which was rolled up and returned already.
    let from = prefix;
    let inclusive = true;
    let under: string | undefined;
    if (after !== undefined && compareKeys(after, prefix) >= 0) {
      const rolled = rolledUp(after, prefix, delimiter);
      const next = rolled === undefined ? undefined : successor(rolled);
      if (next !== undefined) from = next;
      else {
        from = after;
        inclusive = false;
        under = rolled;
      }
    }
    const page = Math.min(input.limit + 1, 1000);
    for (;;) {
      const rows = this.index.scan(input.account, input.bucket, from, inclusive, page);
      let seek: string | undefined;
      for (const row of rows) {
        const key = row.key;
        if (!key.startsWith(prefix)) return { objects, prefixes, truncated, last };
        from = key;
        inclusive = false;
        if (under !== undefined && key.startsWith(under)) continue;
        const i = delimiter ? key.indexOf(delimiter, prefix.length) : -1;
        if (objects.length + prefixes.length >= input.limit) {
          truncated = true;
          return { objects, prefixes, truncated, last };
        }
        if (i < 0) {
          objects.push(info(row));
          last = key;
          continue;
        }
        const entry = key.slice(0, i + delimiter!.length);
        prefixes.push(entry);
        last = entry;
        // Past everything under the common prefix: seek, or skip row by row where no key can follow it.
        seek = successor(entry);
        if (seek === undefined) under = entry;
        else break;
      }
      if (seek !== undefined) {
        from = seek;
        inclusive = true;
        under = undefined;
      } else if (rows.length < page) return { objects, prefixes, truncated, last };
    }
  }

  /** Syncs of the index's WAL so far (tests and benches: puts at once share them). */
  get syncs(): number {
    return this.index.syncs;
  }

  async close(): Promise<void> {
    closeInstance(this.instance);
    await this.swept.catch(() => undefined);
    await this.index.close();
  }
}

/**
 * The first string after every string that starts with `s`, in UTF-8 byte order (code point
 * order): `s` with its last code point one higher. Undefined when there is none.
 */
function successor(s: string): string | undefined {
  const cps = Array.from(s);
  const lastCp = cps.pop()?.codePointAt(0);
  if (lastCp === undefined) return undefined;
  let n = lastCp + 1;
  if (n >= 0xd800 && n <= 0xdfff) n = 0xe000;
  if (n > 0x10ffff) return undefined;
  return cps.join('') + String.fromCodePoint(n);
}

function info(m: Omit<ObjectRow, 'data' | 'version'>): ObjectInfo {
  return { key: m.key, size: m.size, etag: m.etag, content_type: m.content_type, last_modified: m.last_modified };
}
