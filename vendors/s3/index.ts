import { Type } from '@sinclair/typebox';
import {
  defineVendor,
  egressAgents,
  secret,
  kindFromStatus,
  type BucketRef,
  type ConditionFailed,
  type ConditionalDeleteInput,
  type ConditionalPutInput,
  type GetInput,
  type GetResult,
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
} from '../../core/kit/vendor.js';

/**
 * Any S3-compatible service (AWS S3, R2, MinIO, Garage, the gateway's own endpoint) through
 * the AWS SDK. Every gateway bucket of every account lives in the one configured bucket,
 * under `<prefix><account>/<bucket>/`; presigned URLs point straight at the service.
 */
export default defineVendor({
  name: 's3',
  regions: ['global'],
  configSchema: Type.Object(
    {
      bucket: Type.String({
        minLength: 1,
        description: 'The bucket that holds every gateway bucket (as key prefixes).',
      }),
      prefix: Type.String({ default: '', description: 'Key prefix inside that bucket, e.g. "svc/".' }),
      endpoint: Type.String({ default: '', description: 'Service URL; empty means AWS S3 for the region.' }),
      region: Type.String({ default: 'us-east-1' }),
      force_path_style: Type.Boolean({
        default: false,
        description: 'Path-style URLs (MinIO, Garage, most self-hosted services).',
      }),
      access_key_id: secret(Type.String({ default: '' })),
      secret_access_key: secret(Type.String({ default: '' })),
      spool_dir: Type.String({
        default: '',
        description: 'Where uploads of unknown length wait until their length is known; default <data_dir>/tmp.',
      }),
    },
    { additionalProperties: false }
  ),
  async create(config, ctx) {
    // The AWS SDK is loaded when an s3 instance is configured: a gateway without one starts
    // faster and holds ~25 MB less.
    const [
      { S3Client, GetObjectCommand, PutObjectCommand, DeleteObjectCommand, HeadBucketCommand },
      { getSignedUrl },
      { createPresignedPost },
      { S3Objects, ifMatchHeader, conditionFailure },
    ] = await Promise.all([
      import('@aws-sdk/client-s3'),
      import('@aws-sdk/s3-request-presigner'),
      import('@aws-sdk/s3-presigned-post'),
      import('./objects.js'),
    ]);
    const client = new S3Client({
      endpoint: config.endpoint || undefined,
      region: config.region,
      forcePathStyle: config.force_path_style,
      credentials: config.access_key_id
        ? { accessKeyId: config.access_key_id, secretAccessKey: config.secret_access_key }
        : undefined,
      maxAttempts: 1, // the router is the only retry loop
      // Many S3-compatible services do not take aws-chunked trailers: checksum only when required.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // Every connection under the egress rules: the configured endpoint is the operator's choice (a MinIO on the
      // private network is reached), any other host only as `egress` allows, the metadata service never.
      requestHandler: ctx.nodeAgents ? ctx.nodeAgents() : egressAgents(ctx.egressProxy),
    });
    const objects = new S3Objects(client, config.bucket, config.prefix, config.spool_dir || `${ctx.dataDir}/tmp`);
    const free = () => 0;
    return {
      capabilities: {
        'storage.bucket.create': {
          async invoke(input: BucketRef & { region?: string }) {
            return { region: input.region ?? config.region };
          },
          price: free,
        },
        'storage.bucket.delete': {
          async invoke(input: BucketRef, opts) {
            const some = await objects.list({ ...input, prefix: '', limit: 1 }, opts.signal);
            return { deleted: some.objects.length === 0 && some.prefixes.length === 0 };
          },
          price: free,
        },
        'storage.object.put': {
          invoke: (input: PutInput, opts) => objects.put(input, opts.signal) as Promise<PutOutput>,
          price: free,
        },
        // S3 checks If-None-Match / If-Match atomically (AWS since 2024; R2, MinIO and Garage too).
        'storage.object.put_if': {
          invoke: (input: ConditionalPutInput, opts): Promise<PutOutput | ConditionFailed> =>
            objects.put(input, opts.signal),
          price: free,
        },
        'storage.object.get': {
          invoke: (input: GetInput, opts): Promise<GetResult> => objects.get(input, opts.signal),
          price: free,
        },
        'storage.object.head': {
          invoke: (input: ObjectRef, opts): Promise<ObjectInfo | null> => objects.head(input, opts.signal),
          price: free,
        },
        'storage.object.delete': {
          async invoke(input: ObjectRef, opts) {
            const existed = !!(await objects.head(input, opts.signal));
            await client.send(new DeleteObjectCommand({ Bucket: config.bucket, Key: objects.keyOf(input) }), {
              abortSignal: opts.signal,
            });
            return { deleted: existed };
          },
          price: free,
        },
        'storage.object.delete_if': {
          async invoke(input: ConditionalDeleteInput, opts): Promise<{ deleted: boolean } | ConditionFailed> {
            try {
              await client.send(
                new DeleteObjectCommand({
                  Bucket: config.bucket,
                  Key: objects.keyOf(input),
                  IfMatch: ifMatchHeader(input.condition.if_match),
                }),
                { abortSignal: opts.signal }
              );
              return { deleted: true };
            } catch (e) {
              const failed = conditionFailure(e, input.condition);
              if (failed) return failed;
              throw e;
            }
          },
          price: free,
        },
        'storage.object.list': {
          invoke: (input: ListInput, opts): Promise<ListOutput> => objects.list(input, opts.signal),
          price: free,
        },
        'storage.object.presign': {
          async invoke(input: PresignInput): Promise<PresignOutput> {
            const Key = objects.keyOf(input);
            const cmd =
              input.method === 'PUT'
                ? new PutObjectCommand({ Bucket: config.bucket, Key })
                : new GetObjectCommand({
                    Bucket: config.bucket,
                    Key,
                    ResponseContentType: input.response?.content_type,
                    ResponseContentDisposition: input.response?.content_disposition,
                  });
            return { url: await getSignedUrl(client, cmd, { expiresIn: input.expires_seconds }) };
          },
          price: free,
        },
        'storage.object.presign_post': {
          // S3 checks the policy: a file outside content-length-range is refused (EntityTooLarge)
          // before it is stored. Any Content-Type field is allowed, as a PUT allows any header.
          async invoke(input: PresignPostInput): Promise<PresignPostOutput> {
            return createPresignedPost(client, {
              Bucket: config.bucket,
              Key: objects.keyOf(input),
              Expires: input.expires_seconds,
              Conditions: [
                ['content-length-range', 0, input.max_bytes],
                ['starts-with', '$Content-Type', ''],
              ],
            });
          },
          price: free,
        },
      },
      async health({ signal }) {
        try {
          await client.send(new HeadBucketCommand({ Bucket: config.bucket }), { abortSignal: signal });
          return { ok: true };
        } catch (e) {
          return { ok: false, error: (e as Error).name || (e as Error).message };
        }
      },
      classify(err) {
        // The egress rules refused the connection: nothing was sent, another vendor may serve it.
        const code = (err as { code?: string }).code;
        if (code === 'EPROXY' || code === 'EEGRESSREFUSED') return 'not_sent';
        const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
        return typeof status === 'number' ? kindFromStatus(status) : undefined;
      },
      close() {
        client.destroy();
      },
    };
  },
});
