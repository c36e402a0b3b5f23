import { hash, randomBytes } from 'node:crypto';
import { renameSync, unlinkSync } from 'node:fs';
import { mkdir, open, type FileHandle, readdir, rename, rm, rmdir, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Readable, addAbortSignal } from 'node:stream';
import { INLINE_MAX, receive } from './receive.js';
import { readSmallFileSync, readWholeFile, writeNewFile } from './small-file.js';
import { smallWriter } from './small-writer.js';
import type { GetInput, GetOutput, ListInput, ListOutput, ObjectInfo, ObjectRef, PutInput, PutOutput } from '../../plugins/storage/contract.js';
import { resolveRange } from '../../plugins/storage/contract.js';
import { compareKeys } from '../../plugins/storage/names.js';
import { Layout, decodeKey, entryPart, type ObjectPaths } from './layout.js';

interface Meta extends ObjectInfo {
  version: string;
  /** The bytes follow the JSON and a newline in the metadata file itself (small objects). */
  inline?: boolean;
}

/** A metadata file: JSON, then for an inline object "\n" and the bytes (JSON has no raw newline). */
function parseMeta(file: Buffer): Meta & { data?: Buffer } {
  const nl = file.indexOf(10);
  if (nl < 0) return JSON.parse(file.toString('utf8')) as Meta;
  return { ...(JSON.parse(file.toString('utf8', 0, nl)) as Meta), data: file.subarray(nl + 1) };
}

/** Large bodies are synced every this many bytes as they arrive (see `receive`). */
const SYNC_EVERY = 16 * 1024 * 1024;

function isNotFound(e: unknown): boolean {
  const code = (e as { code?: string }).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * Objects as files. A put streams into a temp file in the bucket's `.tmp` directory (same
 * file system, so the rename is atomic), syncs it, renames it to a versioned data file, and
 * then commits by renaming a new metadata file over the old one. A reader sees the old
 * object or the new one, never a torn one; a crash leaves at worst an unreferenced data
 * file. Commits on one key are serialized in process, which is what local storage is for
 * (one gateway node; clusters use an S3-compatible vendor).
 */
export class FileStore {
  private readonly locks = new Map<string, Promise<unknown>>();

  private readonly fsync: boolean;
  /** Directories known to exist, so a put does not mkdir each time (small objects are syscall-bound). */
  private readonly dirs = new Set<string>();

  private readonly instance = randomBytes(4).toString('hex');
  private counter = 0;

  constructor(readonly layout: Layout, opts: { fsync?: boolean } = {}) {
    this.fsync = opts.fsync ?? true;
  }

  private async locked<T>(path: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.locks.get(path) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.locks.set(path, tail);
    try {
      return await run;
    } finally {
      if (this.locks.get(path) === tail) this.locks.delete(path);
    }
  }

  async createBucket(account: string, bucket: string): Promise<void> {
    await this.ensureDir(this.layout.tmpDir(account, bucket));
  }

  private async ensureDir(dir: string): Promise<void> {
    if (this.dirs.has(dir)) return;
    await mkdir(dir, { recursive: true });
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
    const some = await this.list({ account, bucket, prefix: '', limit: 1 });
    if (some.objects.length) return false;
    await rm(dir, { recursive: true, force: true });
    for (const d of this.dirs) if (d === dir || d.startsWith(dir + '/')) this.dirs.delete(d);
    return true;
  }

  private async readMeta(metaPath: string): Promise<(Meta & { data?: Buffer }) | null> {
    const file = await readWholeFile(metaPath);
    return file && parseMeta(file);
  }

  async head(ref: ObjectRef): Promise<ObjectInfo | null> {
    const meta = await this.readMeta(this.layout.objectPaths(ref.account, ref.bucket, ref.key).meta);
    return meta && info(meta);
  }

  async put(input: PutInput, signal?: AbortSignal): Promise<PutOutput> {
    const paths = this.layout.objectPaths(input.account, input.bucket, input.key);
    const tmpDir = this.layout.tmpDir(input.account, input.bucket);
    await this.ensureDir(tmpDir);
    const version = this.nextName();
    const tmp = join(tmpDir, version);
    const metaTmp = `${tmp}.meta`;
    let fh: FileHandle | undefined;
    let replacedNow: number | undefined;
    try {
      let meta: Meta;
      try {
        // Bytes the caller already holds (a small upload) are taken as they are: no stream.
        const got = input.data && input.data.length <= INLINE_MAX ? { size: input.data.length, md5: hash('md5', input.data, 'hex'), inline: [input.data] }
          : await receive(signal ? addAbortSignal(signal, input.body) : input.body, { open: async () => (fh = await open(tmp, 'wx')) },
            { syncEvery: this.fsync ? SYNC_EVERY : undefined });
        meta = { key: input.key, size: got.size, etag: input.etag ?? `"${got.md5}"`, content_type: input.content_type, last_modified: Date.now(), version };
        if (got.inline) {
          // Small: metadata and bytes in one file, committed by one rename (a third of the file system calls).
          meta.inline = true;
          const head = Buffer.from(`${JSON.stringify(meta)}\n`);
          // Where its directory is known, the file is written, synced and committed in the next batch (small-writer.ts).
          if (this.dirs.has(paths.dir)) replacedNow = await this.writeBatched(paths, metaTmp, Buffer.concat([head, ...got.inline]));
          else await writeNewFile(metaTmp, [head, ...got.inline], this.fsync);
        } else {
          // The metadata file is written while the data syncs: neither waits for the other.
          await Promise.all([this.fsync ? fh!.datasync() : undefined, writeFile(metaTmp, JSON.stringify(meta), { flag: 'wx' })]);
        }
      } finally {
        await fh?.close();
      }
      const replaced = replacedNow ?? (meta.inline ? this.commitInlineNow(paths, metaTmp) : undefined) ?? await this.locked(paths.meta, async () => {
        if (!meta.inline) await this.renameInto(tmp, `${paths.stem}.${version}.v`);
        const old = await this.readMeta(paths.meta);
        await this.renameInto(metaTmp, paths.meta);
        if (old && !old.inline) await unlink(`${paths.stem}.${old.version}.v`).catch(() => undefined);
        return old?.size ?? 0;
      });
      return { ...info(meta), replaced_size: replaced };
    } catch (e) {
      if (fh) await rm(tmp, { force: true });
      await rm(metaTmp, { force: true });
      throw e;
    }
  }

  /**
   * Write, sync and commit a small object's file in the writer's next batch, under the key's
   * lock. Returns the size of the object replaced, or undefined when its directory was gone
   * (a delete pruned it): the file is written then, and the locked path commits it.
   */
  private async writeBatched(paths: ObjectPaths, tmp: string, data: Buffer): Promise<number | undefined> {
    const r = await this.locked(paths.meta, () => smallWriter(this.fsync).write({ tmp, data, meta: paths.meta, stem: paths.stem }));
    if ('replaced' in r) return r.replaced;
    if (!r.written || !isNotFound(r.error)) throw r.error;
    this.dirs.delete(paths.dir);
    return undefined;
  }

  /**
   * Commit a small object's file at once, on the event loop, when nothing can be in the way:
   * no commit on the key under way and its directory known to exist. Returns the size of
   * the object replaced, or undefined when the commit must take the locked path.
   */
  private commitInlineNow(paths: ObjectPaths, metaTmp: string): number | undefined {
    if (this.locks.has(paths.meta) || !this.dirs.has(paths.dir)) return undefined;
    const file = readSmallFileSync(paths.meta);
    const old = file && parseMeta(file);
    try {
      renameSync(metaTmp, paths.meta);
    } catch (e) {
      if (!isNotFound(e)) throw e;
      this.dirs.delete(paths.dir); // a delete pruned it: the locked path makes it again
      return undefined;
    }
    if (old && !old.inline) {
      try {
        unlinkSync(`${paths.stem}.${old.version}.v`);
      } catch {
        // already gone: nothing to free
      }
    }
    return old?.size ?? 0;
  }

  /** A name unique in this process and across restarts, cheaper than random bytes per put. */
  private nextName(): string {
    return `${Date.now().toString(36)}${this.instance}${(this.counter++).toString(36)}`;
  }

  async get(input: GetInput): Promise<GetOutput | null | { unsatisfiable: true; size: number }> {
    const paths = this.layout.objectPaths(input.account, input.bucket, input.key);
    // A put may replace the data file between reading the metadata and opening it: read again.
    for (let attempt = 0; attempt < 5; attempt++) {
      const meta = await this.readMeta(paths.meta);
      if (!meta) return null;
      const r = resolveRange(input.range, meta.size);
      if (!r) return { unsatisfiable: true, size: meta.size };
      if (meta.inline) return { ...info(meta), body: Readable.from(meta.size ? [meta.data!.subarray(r.start, r.end + 1)] : []), start: r.start, end: r.end };
      let fh;
      try {
        fh = await open(`${paths.stem}.${meta.version}.v`, 'r');
      } catch (e) {
        if (isNotFound(e)) continue;
        throw e;
      }
      if (meta.size === 0) {
        await fh.close();
        return { ...info(meta), body: Readable.from([]), start: 0, end: -1 };
      }
      const body = fh.createReadStream({ start: r.start, end: r.end, highWaterMark: 256 * 1024 });
      return { ...info(meta), body, start: r.start, end: r.end };
    }
    throw new Error('local-storage: object kept changing while it was being read');
  }

  async delete(ref: ObjectRef): Promise<boolean> {
    const paths = this.layout.objectPaths(ref.account, ref.bucket, ref.key);
    const existed = await this.locked(paths.meta, async () => {
      const meta = await this.readMeta(paths.meta);
      if (!meta) return false;
      await unlink(paths.meta);
      if (!meta.inline) await unlink(`${paths.stem}.${meta.version}.v`).catch(() => undefined);
      return true;
    });
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
    return existed;
  }

  async list(input: ListInput): Promise<ListOutput> {
    const base = this.layout.bucketDir(input.account, input.bucket);
    const keys: string[] = [];
    await walk(base, '', input.prefix, keys);
    keys.sort(compareKeys);
    const objects: string[] = [];
    const prefixes: string[] = [];
    let truncated = false;
    let last: string | undefined;
    const after = input.after;
    // After a common prefix, everything under it was rolled up into it already.
    const skipUnder = after !== undefined && !!input.delimiter && after.endsWith(input.delimiter);
    for (const key of keys) {
      if (!key.startsWith(input.prefix)) continue;
      if (after !== undefined && (compareKeys(key, after) <= 0 || (skipUnder && key.startsWith(after)))) continue;
      let entry = key;
      let isPrefix = false;
      if (input.delimiter) {
        const i = key.indexOf(input.delimiter, input.prefix.length);
        if (i >= 0) {
          entry = key.slice(0, i + input.delimiter.length);
          isPrefix = true;
        }
      }
      if (isPrefix && prefixes[prefixes.length - 1] === entry) continue;
      if (objects.length + prefixes.length >= input.limit) {
        truncated = true;
        break;
      }
      (isPrefix ? prefixes : objects).push(entry);
      last = entry;
    }
    const infos: ObjectInfo[] = [];
    for (const key of objects) {
      const meta = await this.readMeta(this.layout.objectPaths(input.account, input.bucket, key).meta);
      if (meta) infos.push(info(meta));
    }
    return { objects: infos, prefixes, truncated, last };
  }
}

function info(m: Meta): ObjectInfo {
  return { key: m.key, size: m.size, etag: m.etag, content_type: m.content_type, last_modified: m.last_modified };
}

/** Collect the keys under `dir` that can start with `prefix`, pruning directories that cannot. */
async function walk(dir: string, escaped: string, prefix: string, out: string[]): Promise<void> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (e) {
    if (isNotFound(e)) return;
    throw e;
  }
  for (const ent of entries) {
    const part = entryPart(ent.name);
    if (!part) continue;
    const text = escaped + part.text;
    if (part.kind === 'object') {
      if (ent.isFile()) out.push(decodeKey(text));
      continue;
    }
    if (!ent.isDirectory()) continue;
    if (part.kind === 'dir') {
      const decoded = decodeKey(text);
      if (!(decoded.startsWith(prefix) || prefix.startsWith(decoded))) continue;
    }
    await walk(join(dir, ent.name), text, prefix, out);
  }
}
