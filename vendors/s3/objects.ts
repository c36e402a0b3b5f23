import type { Readable } from 'node:stream';
import { withKnownLength } from './spool.js';
import {
  type S3Client,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  ListObjectsV2Command,
} from '@aws-sdk/client-s3';
import {
  type ConditionFailed,
  type GetInput,
  type GetResult,
  type ListInput,
  type ListOutput,
  type ObjectInfo,
  type ObjectRef,
  type PutInput,
  type PutOutput,
  type WriteCondition,
  compareKeys,
  rolledUp,
} from '../../core/kit/vendor.js';

/** An If-Match list as S3 takes it: quoted ETags, comma-separated (`*` as it is). */
export function ifMatchHeader(list: string[]): string {
  return list.map((e) => (e === '*' ? e : `"${e}"`)).join(', ');
}

/** S3's answer to a write whose condition did not hold, as ConditionFailed; undefined for any other error. */
export function conditionFailure(e: unknown, c: WriteCondition): ConditionFailed | undefined {
  const s = status(e);
  if (s === 412) return { precondition_failed: 'if_none_match' in c ? 'exists' : 'etag' };
  if (s === 404 && 'if_match' in c && (e as { name?: string }).name === 'NoSuchKey')
    return { precondition_failed: 'missing' };
  return undefined;
}

function status(e: unknown): number | undefined {
  return (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

// The highest code point: appended to a common prefix, StartAfter skips everything under it.
const MAX_CHAR = '\u{10FFFF}';

/** Object operations of the s3 adapter, with the account and bucket mapped to a key prefix. */
export class S3Objects {
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    private readonly prefix: string,
    private readonly spoolDir: string
  ) {}

  base(account: string, bucket: string): string {
    return `${this.prefix}${account}/${bucket}/`;
  }

  keyOf(ref: ObjectRef): string {
    return this.base(ref.account, ref.bucket) + ref.key;
  }

  async head(ref: ObjectRef, signal?: AbortSignal): Promise<ObjectInfo | null> {
    try {
      const h = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.keyOf(ref) }), {
        abortSignal: signal,
      });
      return {
        key: ref.key,
        size: h.ContentLength ?? 0,
        etag: h.ETag ?? '',
        content_type: h.ContentType ?? 'application/octet-stream',
        last_modified: h.LastModified?.getTime() ?? 0,
      };
    } catch (e) {
      if (status(e) === 404) return null;
      throw e;
    }
  }

  /**
   * PutObject. A `condition` goes to S3 as If-None-Match / If-Match, which S3 checks
   * atomically: 412 (and 404 for If-Match with no object) come back as ConditionFailed.
   */
  async put(
    input: PutInput & { condition?: WriteCondition },
    signal?: AbortSignal
  ): Promise<PutOutput | ConditionFailed> {
    const known = await withKnownLength(input.body, input.content_length, this.spoolDir, signal);
    const c = input.condition;
    try {
      const old = await this.head(input, signal);
      const res = await this.client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: this.keyOf(input),
          Body: known.body,
          ContentLength: known.length,
          ContentType: input.content_type,
          ContentDisposition: input.content_disposition,
          IfNoneMatch: c && 'if_none_match' in c ? '*' : undefined,
          IfMatch: c && 'if_match' in c ? ifMatchHeader(c.if_match) : undefined,
        }),
        { abortSignal: signal }
      );
      return {
        key: input.key,
        size: known.length,
        etag: res.ETag ?? '',
        content_type: input.content_type,
        last_modified: Date.now(),
        replaced_size: old?.size ?? 0,
        path: this.keyOf(input),
      };
    } catch (e) {
      const failed = c && conditionFailure(e, c);
      if (failed) return failed;
      throw e;
    } finally {
      await known.cleanup();
    }
  }

  async get(input: GetInput, signal?: AbortSignal): Promise<GetResult> {
    const r = input.range;
    const Range = !r ? undefined : 'suffix' in r ? `bytes=-${r.suffix}` : `bytes=${r.start}-${r.end ?? ''}`;
    try {
      const g = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.keyOf(input), Range }), {
        abortSignal: signal,
      });
      const m = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(g.ContentRange ?? '');
      const total = m ? Number(m[3]) : (g.ContentLength ?? 0);
      return {
        key: input.key,
        size: total,
        etag: g.ETag ?? '',
        content_type: g.ContentType ?? 'application/octet-stream',
        last_modified: g.LastModified?.getTime() ?? 0,
        body: g.Body as Readable,
        start: m ? Number(m[1]) : 0,
        end: m ? Number(m[2]) : total - 1,
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
    const after =
      input.after === undefined
        ? undefined
        : base + input.after + (rolledUp(input.after, input.prefix, input.delimiter) === input.after ? MAX_CHAR : '');
    const res = await this.client.send(
      new ListObjectsV2Command({
        Bucket: this.bucket,
        Prefix: base + input.prefix,
        Delimiter: input.delimiter,
        StartAfter: after,
        MaxKeys: input.limit,
      }),
      { abortSignal: signal }
    );
    const objects = (res.Contents ?? []).map((o) => ({
      key: o.Key!.slice(base.length),
      size: o.Size ?? 0,
      etag: o.ETag ?? '',
      last_modified: o.LastModified?.getTime() ?? 0,
    }));
    const prefixes = (res.CommonPrefixes ?? []).map((p) => p.Prefix!.slice(base.length));
    const candidates = [objects[objects.length - 1]?.key, prefixes[prefixes.length - 1]].filter(
      (x): x is string => x !== undefined
    );
    const last = candidates.sort(compareKeys).pop();
    return { objects, prefixes, truncated: !!res.IsTruncated, last };
  }
}
