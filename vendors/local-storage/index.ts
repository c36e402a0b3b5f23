import { Type } from '@sinclair/typebox';
import {
  defineVendor,
  VendorFailure,
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
  type PutInput,
  type PutOutput,
  presignUrl,
  responseQuery,
} from '../../core/kit/vendor.js';
import { Layout } from './layout.js';
import { FileStore } from './store.js';

const free = () => 0;

/**
 * The embedded storage vendor: objects under `<data_dir>/objects/`, committed in an index of
 * its own that holds small objects inline; large ones are files, streamed in and out. Its
 * presigned URLs point at the gateway's own S3-compatible endpoint, which the storage area
 * serves and verifies; this adapter only signs them and moves bytes.
 */
export default defineVendor({
  name: 'local-storage',
  embedded: true,
  regions: ['global'],
  configSchema: Type.Object(
    {
      dir: Type.String({ default: '', description: 'Directory for objects; default <data_dir>.' }),
      fsync: Type.Boolean({
        default: true,
        description: 'Sync each object to disk before the put is answered (durable across power loss; slower).',
      }),
    },
    { additionalProperties: false }
  ),
  async create(config, ctx) {
    const store = new FileStore(new Layout(config.dir || ctx.dataDir), { fsync: config.fsync });
    await store.swept.then(
      (n) => n && ctx.log.info({ removed: n }, 'local-storage: removed temp files of uploads cut off by a crash'),
      (e) => ctx.log.warn({ err: (e as Error).message }, 'local-storage: temp files of crashed uploads not swept')
    );
    return {
      capabilities: {
        'storage.bucket.create': {
          async invoke(input: BucketRef & { region?: string }) {
            await store.createBucket(input.account, input.bucket);
            return { region: input.region ?? 'local' };
          },
          price: free,
        },
        'storage.bucket.delete': {
          async invoke(input: BucketRef) {
            return { deleted: await store.deleteBucket(input.account, input.bucket) };
          },
          price: free,
        },
        'storage.object.put': {
          invoke: (input: PutInput, opts): Promise<PutOutput> => store.put(input, opts.signal) as Promise<PutOutput>, // no condition: never ConditionFailed
          price: free,
        },
        // Conditions are checked in the transaction that commits the object's row (store.ts).
        'storage.object.put_if': {
          invoke: (input: ConditionalPutInput, opts): Promise<PutOutput | ConditionFailed> =>
            store.put(input, opts.signal),
          price: free,
        },
        'storage.object.get': {
          invoke: (input: GetInput): Promise<GetResult> => store.get(input),
          price: free,
        },
        'storage.object.head': {
          invoke: (input: ObjectRef): Promise<ObjectInfo | null> => store.head(input),
          price: free,
        },
        'storage.object.delete': {
          async invoke(input: ObjectRef) {
            return { deleted: (await store.delete(input)) === true };
          },
          price: free,
        },
        'storage.object.delete_if': {
          async invoke(input: ConditionalDeleteInput) {
            const r = await store.delete(input);
            return typeof r === 'boolean' ? { deleted: r } : r;
          },
          price: free,
        },
        'storage.object.list': {
          invoke: (input: ListInput): Promise<ListOutput> => store.list(input),
          price: free,
        },
        'storage.object.presign': {
          async invoke(input: PresignInput): Promise<PresignOutput> {
            const s = input.signer;
            if (!s)
              throw new VendorFailure(
                'client_error',
                "local-storage URLs are served by the storage area's S3 endpoint; turn plugins.storage on"
              );
            return {
              url: presignUrl({
                method: input.method,
                endpoint: s.endpoint,
                bucket: input.bucket,
                key: input.key,
                region: s.region,
                accessKeyId: s.access_key_id,
                secret: s.secret,
                expiresSeconds: input.expires_seconds,
                query: responseQuery(input.response),
              }),
            };
          },
          price: free,
        },
      },
      async health() {
        return { ok: true };
      },
      close: () => store.close(),
    };
  },
});
