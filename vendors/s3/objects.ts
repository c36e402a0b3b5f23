import type { Readable } from 'node:stream';
import { withKnownLength } from './spool.js';
import { S3Client, GetObjectCommand, HeadObjectCommand, PutObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { GetInput, GetResult, ListInput, ListOutput, ObjectInfo, ObjectRef, PutInput, PutOutput } from '../../plugins/storage/contract.js';
import { compareKeys, rolledUp } from '../../plugins/storage/names.js';

function status(e: unknown): number | undefined {
  return (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

// The highest code point: appended to a common prefix, StartAfter skips everything under it.
const MAX_CHAR = '\u{10FFFF}';

/** Object operations of the s3 adapter, with the account and bucket mapped to a key prefix. */
export class S3Objects {
  constructor(private readonly client: S3Client, private readonly bucket: string, private readonly prefix: string, private readonly spoolDir: string) {}

  base(account: string, bucket: string): string {
    return `${this.prefix}${account}/${bucket}/`;
  }

  keyOf(ref: ObjectRef): string {
    return this.base(ref.account, ref.bucket) + ref.key;
  }

  async head(ref: ObjectRef, signal?: AbortSignal): Promise<ObjectInfo | null> {
    try {
      const h = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.keyOf(ref) }), { abortSignal: signal });
      return { key: ref.key, size: h.ContentLength ?? 0, etag: h.ETag ?? '', content_type: h.ContentType ?? 'application/octet-stream', last_modified: h.LastModified?.getTime() ?? 0 };
    } catch (e) {
      if (status(e) === 404) return null;
      throw e;
    }
  }

  async put(input: PutInput, signal?: AbortSignal): Promise<PutOutput> {
    const known = await withKnownLength(input.body, input.content_length, this.spoolDir, signal);
    try {
      const old = await this.head(input, signal);
      const res = await this.client.send(new PutObjectCommand({
        Bucket: this.bucket, Key: this.keyOf(input), Body: known.body, ContentLength: known.length, ContentType: input.content_type,
        ContentDisposition: input.content_disposition,
      }), { abortSignal: signal });
      return {
        key: input.key, size: known.length, etag: res.ETag ?? '', content_type: input.content_type, last_modified: Date.now(), replaced_size: old?.size ?? 0,
        path: this.keyOf(input),
      };
    } finally {
      await known.cleanup();
    }
  }

  async get(input: GetInput, signal?: AbortSignal): Promise<GetResult> {
    const r = input.range;
    const Range = !r ? undefined : 'suffix' in r ? `bytes=-${r.suffix}` : `bytes=${r.start}-${r.end ?? ''}`;
    try {
      const g = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.keyOf(input), Range }), { abortSignal: signal });
      const m = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(g.ContentRange ?? '');
      const total = m ? Number(m[3]) : g.ContentLength ?? 0;
      return {
        key: input.key, size: total, etag: g.ETag ?? '', content_type: g.ContentType ?? 'application/octet-stream', last_modified: g.LastModified?.getTime() ?? 0,
        body: g.Body as Readable, start: m ? Number(m[1]) : 0, end: m ? Number(m[2]) : total - 1,
      };
    } catch (e) {
      if (status(e) === 404) return null;
      if (status(e) === 416) {
        const h = await this.head(input, signal);
        return h ? { unsatisfiable: true, size: h.size } : null;
      }
      throw e;
    }
  }

  async list(input: ListInput, signal?: AbortSignal): Promise<ListOutput> {
    const base = this.base(input.account, input.bucket);
    const after = input.after === undefined ? undefined
      : base + input.after + (rolledUp(input.after, input.prefix, input.delimiter) === input.after ? MAX_CHAR : '');
    const res = await this.client.send(new ListObjectsV2Command({
      Bucket: this.bucket, Prefix: base + input.prefix, Delimiter: input.delimiter, StartAfter: after, MaxKeys: input.limit,
    }), { abortSignal: signal });
    const objects = (res.Contents ?? []).map((o) => ({
      key: o.Key!.slice(base.length), size: o.Size ?? 0, etag: o.ETag ?? '', last_modified: o.LastModified?.getTime() ?? 0,
    }));
    const prefixes = (res.CommonPrefixes ?? []).map((p) => p.Prefix!.slice(base.length));
    const candidates = [objects[objects.length - 1]?.key, prefixes[prefixes.length - 1]].filter((x): x is string => x !== undefined);
    const last = candidates.sort(compareKeys).pop();
    return { objects, prefixes, truncated: !!res.IsTruncated, last };
  }
}
