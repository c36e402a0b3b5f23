import { Type } from '@sinclair/typebox';
import type * as MinioTypes from 'minio';
import type { Readable } from 'node:stream';
import {
  defineVendor,
  egressAgents,
  secret,
  type FailureKind,
  type BucketRef,
  type GetInput,
  type GetResult,
  type ListedObject,
  type ListInput,
  type ListOutput,
  type ObjectInfo,
  type ObjectRef,
  type PresignInput,
  type PresignOutput,
  type PresignPostInput,
  type PresignPostOutput,
  type PutInput,
  type PutOutput,
  resolveRange,
  compareKeys,
  rolledUp,
} from '../../core/kit/vendor.js';
import { withKnownLength } from '../s3/spool.js';

const quoted = (etag: string | undefined) => (etag ? (etag.startsWith('"') ? etag : `"${etag}"`) : '');
const missing = (e: unknown) => ['NotFound', 'NoSuchKey'].includes((e as { code?: string }).code ?? '');

const KINDS: Record<string, FailureKind> = {
  AccessDenied: 'auth',
  InvalidAccessKeyId: 'auth',
  SignatureDoesNotMatch: 'auth',
  // The egress proxy or rules refused the connection: nothing was sent.
  EPROXY: 'not_sent',
  EEGRESSREFUSED: 'not_sent',
  SlowDown: 'rate_limited',
  ServiceUnavailable: 'unavailable',
  InternalError: 'unavailable',
  RequestTimeout: 'timeout',
};

/**
 * MinIO (or any S3-compatible service) through the `minio` client. Like the s3 adapter, one
 * configured bucket holds every gateway bucket under `<prefix><account>/<bucket>/`. The
 * client addresses the host root (no path prefix) and lists with "/" as the only delimiter.
 */
export default defineVendor({
  name: 'minio',
  regions: ['global'],
  configSchema: Type.Object(
    {
      endpoint: Type.String({
        minLength: 1,
        description: 'http(s)://host:port of the service (host root; the minio client takes no path).',
      }),
      bucket: Type.String({ minLength: 3 }),
      prefix: Type.String({ default: '' }),
      region: Type.String({
        default: 'us-east-1',
        description: 'Set, so the client does not ask the service for the bucket location first.',
      }),
      path_style: Type.Boolean({ default: true }),
      access_key_id: secret(Type.String({ default: '' })),
      secret_access_key: secret(Type.String({ default: '' })),
      spool_dir: Type.String({ default: '' }),
    },
    { additionalProperties: false }
  ),
  async create(config, ctx) {
    // Loaded when a minio instance is configured (~40 MB otherwise held for nothing).
    const Minio = await import('minio');
    const u = new URL(config.endpoint);
    // Every connection under the egress rules, as the s3 adapter's: the configured endpoint is reached.
    const agents = ctx.nodeAgents ? ctx.nodeAgents() : egressAgents(ctx.egressProxy);
    const transportAgent = u.protocol === 'https:' ? agents.httpsAgent : agents.httpAgent;
    const client = new Minio.Client({
      endPoint: u.hostname,
      port: u.port ? Number(u.port) : undefined,
      useSSL: u.protocol === 'https:',
      accessKey: config.access_key_id,
      secretKey: config.secret_access_key,
      region: config.region,
      pathStyle: config.path_style,
      transportAgent,
    });
    const B = config.bucket;
    const base = (r: BucketRef) => `${config.prefix}${r.account}/${r.bucket}/`;
    const keyOf = (r: ObjectRef) => base(r) + r.key;
    const spoolDir = config.spool_dir || `${ctx.dataDir}/tmp`;
    const free = () => 0;

    async function head(r: ObjectRef): Promise<ObjectInfo | null> {
      try {
        const s = await client.statObject(B, keyOf(r));
        return {
          key: r.key,
          size: s.size,
          etag: quoted(s.etag),
          content_type: String(s.metaData?.['content-type'] ?? 'application/octet-stream'),
          last_modified: s.lastModified.getTime(),
        };
      } catch (e) {
        if (missing(e)) return null;
        throw e;
      }
    }

    async function list(input: ListInput): Promise<ListOutput> {
      if (input.delimiter && input.delimiter !== '/')
        throw Object.assign(new Error('the minio adapter lists with "/" as the only delimiter'), {
          code: 'InvalidArgument',
        });
      const b = base(input);
      const after =
        input.after === undefined
          ? undefined
          : b
            + input.after
            + (rolledUp(input.after, input.prefix, input.delimiter) === input.after ? '\u{10FFFF}' : '');
      const stream = client.listObjectsV2(B, b + input.prefix, !input.delimiter, after);
      const objects: ListedObject[] = [];
      const prefixes: string[] = [];
      let truncated = false;
      for await (const item of stream as AsyncIterable<MinioTypes.BucketItem>) {
        if (objects.length + prefixes.length >= input.limit) {
          truncated = true;
          break;
        }
        if (item.prefix) prefixes.push(item.prefix.slice(b.length));
        else if (item.name)
          objects.push({
            key: item.name.slice(b.length),
            size: item.size,
            etag: quoted(item.etag),
            last_modified: item.lastModified?.getTime() ?? 0,
          });
      }
      (stream as unknown as Readable).destroy?.();
      const last = [objects[objects.length - 1]?.key, prefixes[prefixes.length - 1]]
        .filter((x): x is string => x !== undefined)
        .sort(compareKeys)
        .pop();
      return { objects, prefixes, truncated, last };
    }

    return {
      capabilities: {
        'storage.bucket.create': {
          invoke: async (input: BucketRef & { region?: string }) => ({ region: input.region ?? config.region }),
          price: free,
        },
        'storage.bucket.delete': {
          async invoke(input: BucketRef) {
            const some = await list({ ...input, prefix: '', limit: 1 });
            return { deleted: some.objects.length === 0 };
          },
          price: free,
        },
        'storage.object.put': {
          async invoke(input: PutInput, opts): Promise<PutOutput> {
            const known = await withKnownLength(input.body, input.content_length, spoolDir, opts.signal);
            try {
              const old = await head(input);
              const meta: Record<string, string> = { 'Content-Type': input.content_type };
              if (input.content_disposition) meta['Content-Disposition'] = input.content_disposition;
              const res = await client.putObject(B, keyOf(input), known.body, known.length, meta);
              return {
                key: input.key,
                size: known.length,
                etag: quoted(res.etag),
                content_type: input.content_type,
                last_modified: Date.now(),
                replaced_size: old?.size ?? 0,
                path: keyOf(input),
              };
            } finally {
              await known.cleanup();
            }
          },
          price: free,
        },
        'storage.object.get': {
          async invoke(input: GetInput): Promise<GetResult> {
            const info = await head(input);
            if (!info) return null;
            const r = resolveRange(input.range, info.size);
            if (!r) return { unsatisfiable: true, size: info.size };
            const body =
              info.size === 0
                ? await client.getObject(B, keyOf(input))
                : await client.getPartialObject(B, keyOf(input), r.start, r.end - r.start + 1);
            return { ...info, body, start: r.start, end: r.end };
          },
          price: free,
        },
        'storage.object.head': { invoke: (input: ObjectRef) => head(input), price: free },
        'storage.object.delete': {
          async invoke(input: ObjectRef) {
            const existed = !!(await head(input));
            await client.removeObject(B, keyOf(input));
            return { deleted: existed };
          },
          price: free,
        },
        'storage.object.list': { invoke: (input: ListInput) => list(input), price: free },
        'storage.object.presign': {
          async invoke(input: PresignInput): Promise<PresignOutput> {
            const resp: Record<string, string> = {};
            if (input.response?.content_type) resp['response-content-type'] = input.response.content_type;
            if (input.response?.content_disposition)
              resp['response-content-disposition'] = input.response.content_disposition;
            const url =
              input.method === 'PUT'
                ? await client.presignedPutObject(B, keyOf(input), input.expires_seconds)
                : await client.presignedGetObject(B, keyOf(input), input.expires_seconds, resp);
            return { url };
          },
          price: free,
        },
        'storage.object.presign_post': {
          // The service checks the policy: a file outside content-length-range is refused before it is stored.
          async invoke(input: PresignPostInput): Promise<PresignPostOutput> {
            const policy = client.newPostPolicy();
            policy.setBucket(B);
            policy.setKey(keyOf(input));
            policy.setExpires(new Date(Date.now() + input.expires_seconds * 1000));
            policy.setContentLengthRange(0, input.max_bytes);
            // Any Content-Type field, as a PUT allows any header (setContentTypeStartsWith refuses '').
            policy.policy.conditions.push(['starts-with', '$Content-Type', '']);
            const { postURL, formData } = await client.presignedPostPolicy(policy);
            return { url: postURL, fields: formData };
          },
          price: free,
        },
      },
      async health() {
        try {
          return { ok: await client.bucketExists(B) };
        } catch (e) {
          return { ok: false, error: (e as Error).message };
        }
      },
      classify(err) {
        return KINDS[(err as { code?: string }).code ?? ''];
      },
      close() {
        transportAgent.destroy();
      },
    };
  },
});
