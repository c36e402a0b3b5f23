import { defineArea } from '../../core/define.js';
import { loadMasterKey } from '../../core/auth/master-key.js';
import { StorageConfigSchema } from './config.js';
import { storageMigrations } from './migrations.js';
import { STORAGE_CAPABILITIES } from './contract.js';
import { CredentialStore } from './credentials.js';
import { StorageService } from './service.js';
import { registerBucketRoutes } from './bucket-routes.js';
import { registerObjectRoutes } from './object-routes.js';
import { registerCredentialRoutes } from './credential-routes.js';
import { registerS3Endpoint } from './s3/endpoint.js';

/** Storage: buckets, presigned URLs, S3 credentials, and the gateway's own S3-compatible endpoint. */
export default defineArea({
  name: 'storage',
  configSchema: StorageConfigSchema,
  migrations: storageMigrations,
  capabilities: STORAGE_CAPABILITIES,
  async register(app, ctx) {
    const masterKey = loadMasterKey(ctx.svc.config.master_key, ctx.svc.config.data_dir);
    const storage = new StorageService(ctx.svc, ctx.config, new CredentialStore(ctx.svc.db, masterKey));
    // Every body field of this area is optional somewhere: a POST without a body means the defaults.
    app.addHook('preValidation', async (req) => {
      if (req.method === 'POST' && req.body == null && req.url.startsWith('/v1/')) req.body = {};
    });
    registerBucketRoutes(app, storage);
    registerObjectRoutes(app, storage);
    registerCredentialRoutes(app, storage);
    await app.register(async (scope) => registerS3Endpoint(scope, storage));
  },
});
