import { defineArea, STORAGE_CAPABILITIES } from '../../core/kit/area.js';
import { StorageConfigSchema } from './config.js';
import { storageMigrations } from './migrations.js';
import { CredentialStore } from './credentials.js';
import { StorageService } from './service.js';
import { registerBucketRoutes } from './bucket-routes.js';
import { registerObjectRoutes } from './object-routes.js';
import { registerCredentialRoutes } from './credential-routes.js';
import { registerS3Endpoint } from './s3/endpoint.js';
import { StorageBilling } from './billing.js';
import { publicResultUrls } from './public-results.js';
import { MultipartExpiry } from './multipart-expiry.js';

/** Storage: buckets, presigned URLs, S3 credentials, and the gateway's own S3-compatible endpoint. */
export default defineArea({
  name: 'storage',
  configSchema: StorageConfigSchema,
  migrations: storageMigrations,
  capabilities: STORAGE_CAPABILITIES,
  async register(app, ctx) {
    const masterKey = ctx.svc.masterKey;
    const credentials = new CredentialStore(ctx.svc.db, masterKey);
    const storage = new StorageService(ctx.svc, ctx.config, credentials);
    // The core result store writes through the vendor chosen here, and its URLs for
    // local-storage point at this area's S3 endpoint, signed with the account's internal key
    // (or unsigned, in a public bucket, when results are public).
    ctx.svc.results.configure({
      vendor: ctx.config.results_vendor || undefined,
      retentionSeconds: ctx.config.results_retention_seconds,
      signer: async (accountId) => {
        const c = await credentials.internal(accountId);
        return {
          endpoint: storage.endpoint,
          region: ctx.config.region,
          access_key_id: c.accessKeyId,
          secret: c.secret,
        };
      },
      presign:
        ctx.config.presign_through === 'gateway'
          ? (r) => storage.gatewayUrl(r.accountId, r.bucket, r.key, 'GET', r.expiresSeconds, r.response)
          : undefined,
      publicUrl: publicResultUrls(ctx.config, ctx.svc.vendors, storage.endpoint),
      // Results count in the account's storage usage (reported, capped, charged) while kept.
      usage: storage.usage,
    });
    // Every body field of this area is optional somewhere: a POST without a body means the defaults.
    app.addHook('preValidation', async (req) => {
      if (req.method === 'POST' && req.body == null && req.url.startsWith('/v1/')) req.body = {};
    });
    registerBucketRoutes(app, storage);
    registerObjectRoutes(app, storage);
    registerCredentialRoutes(app, storage);
    await app.register(async (scope) => registerS3Endpoint(scope, storage));
    // Per app, not per module: one process may run several gateways (tests do).
    const billing = new StorageBilling(ctx.svc.db, ctx.svc.wallet, ctx.config, ctx.log, storage.usage);
    const expiry = new MultipartExpiry(storage, ctx.log);
    app.addHook('onReady', async () => {
      billing.start();
      expiry.start();
    });
    app.addHook('onClose', async () => {
      billing.stop();
      await expiry.stop();
      // Best effort: the core may close the database first, and a meter is not worth a failed shutdown.
      await storage.usage
        .flush()
        .catch((e) => ctx.log.warn({ err: (e as Error).message }, 'storage meters not recorded at shutdown'));
    });
  },
});
