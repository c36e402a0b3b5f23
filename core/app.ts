import Fastify, { type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { CoreConfig } from '../config/schema.js';
import { openDatabase } from './db/open.js';
import { migrateModule } from './db/migrate.js';
import { coreMigrations } from './db/core-migrations.js';
import { createLogger } from './logger.js';
import { newId } from './ids.js';
import { KeyStore } from './auth/keys.js';
import { TokenSigner } from './auth/tokens.js';
import { loadMasterKey } from './auth/master-key.js';
import { Wallet } from './wallet/wallet.js';
import { Router } from './router/router.js';
import { VendorRegistry } from './router/registry.js';
import { RateLimiter } from './http/rate-limit.js';
import { validatorCompiler } from './http/validation.js';
import { installErrorHandling } from './http/error-handler.js';
import { installAuth } from './http/auth-hook.js';
import { installIdempotency } from './http/idempotency.js';
import { installMeterHeaders } from './http/meter-headers.js';
import { loadAreas, resolveVendor, checkConfig, redact } from './plugin-loader.js';
import { builtinVendors } from '../vendors/builtin.js';
import { registerSystemRoutes } from './system-routes.js';
import { VERSION } from './version.js';
import { Egress } from './egress/egress.js';
import { JobsEngine } from './jobs/engine.js';
import { jobsMigrations } from './jobs/migrations.js';
import type { CapabilitySpec } from './define.js';
import type { Svc } from './context.js';
import { ConfigError } from '../config/load.js';

export interface BuildOptions {
  /** Directory third-party plugins and relative plugin paths resolve from (the config file's). */
  baseDir?: string;
  logger?: Logger;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Build the gateway without listening: tests call this and use app.inject(). */
export async function buildApp(config: CoreConfig, opts: BuildOptions = {}): Promise<FastifyInstance> {
  const log = opts.logger ?? createLogger(config.log.level);
  const baseDir = opts.baseDir ?? process.cwd();
  const areas = await loadAreas(config, baseDir);

  const capabilities = new Map<string, CapabilitySpec>();
  for (const a of areas) for (const [k, v] of Object.entries(a.def.capabilities ?? {})) capabilities.set(k, v);

  const vendors = new VendorRegistry();
  const configuredAdapters = new Set<string>();
  for (const [i, v] of config.vendors.entries()) {
    const where = `vendors[${i}]`;
    const def = await resolveVendor(v.use, baseDir, `${where}.use`);
    const vcfg = checkConfig(def.configSchema, v.config, `${where}.config`);
    configuredAdapters.add(def.name);
    const instance = await def.create(vcfg as any, { instanceId: v.id, fetch: globalThis.fetch, publicUrl: config.server.public_url, dataDir: config.data_dir, log: log.child({ vendor: v.id }) });
    vendors.add({ id: v.id, adapter: def.name, regions: v.regions ?? def.regions ?? ['global'], def, instance, redactedConfig: redact(def.configSchema, vcfg) });
  }
  // Embedded defaults serve every capability no configured instance of theirs already serves.
  for (const def of builtinVendors.filter((d) => d.embedded && !configuredAdapters.has(d.name))) {
    const vcfg = checkConfig(def.configSchema, {}, `vendors.${def.name}`);
    const instance = await def.create(vcfg as any, { instanceId: def.name, fetch: globalThis.fetch, publicUrl: config.server.public_url, dataDir: config.data_dir, log: log.child({ vendor: def.name }) });
    vendors.add({ id: def.name, adapter: def.name, regions: def.regions ?? ['global'], def, instance, redactedConfig: redact(def.configSchema, vcfg) });
  }
  for (const [cap, route] of Object.entries(config.routes)) vendors.setRoute(cap, route.targets);

  const database = await openDatabase(config.database.url, { poolSize: config.database.pool_size });
  try {
    await migrateModule(database.db, 'core', coreMigrations);
    await migrateModule(database.db, 'jobs', jobsMigrations);
    for (const a of areas) if (a.def.migrations) await migrateModule(database.db, a.def.name, a.def.migrations);
  } catch (e) {
    await database.close();
    throw e;
  }

  const wallet = new Wallet(database.db);
  const svc: Svc = {
    config,
    db: database.db,
    dialect: database.dialect,
    log,
    keys: new KeyStore(database.db),
    tokens: new TokenSigner(loadMasterKey(config.master_key, config.data_dir)),
    wallet,
    router: new Router(vendors, wallet, capabilities, config.wallet.markup, log.child({ part: 'router' })),
    vendors,
    rateLimits: new RateLimiter(),
    egress: new Egress(config.egress),
    jobs: new JobsEngine(database.db, database.dialect, config.jobs, log.child({ part: 'jobs' })),
    areas,
    capabilities,
    version: VERSION,
    startedAt: Date.now(),
  };

  const app = Fastify({
    loggerInstance: log,
    bodyLimit: config.limits.body_bytes,
    trustProxy: config.server.trust_proxy,
    requestIdHeader: false,
    genReqId: (req) => {
      const h = req.headers['x-request-id'];
      return typeof h === 'string' && REQUEST_ID.test(h) ? h : newId('req');
    },
    forceCloseConnections: 'idle',
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: true },
  }) as unknown as FastifyInstance; // pino's Logger is wider than FastifyBaseLogger
  app.decorate('svc', svc);
  app.setValidatorCompiler(validatorCompiler);
  installErrorHandling(app);
  installMeterHeaders(app);
  installAuth(app);
  installIdempotency(app);
  await registerSystemRoutes(app);

  for (const a of areas) {
    const ctx = { svc, config: a.config, log: log.child({ area: a.def.name }) };
    await app.register(async (scope) => {
      await a.def.register(scope, ctx);
    });
  }

  app.addHook('onReady', async () => {
    for (const a of areas) await a.def.start?.({ svc, config: a.config, log: log.child({ area: a.def.name }) });
    svc.jobs.start();
  });
  app.addHook('onClose', async () => {
    await svc.jobs.stop();
    for (const a of [...areas].reverse()) await a.def.stop?.();
    await vendors.closeAll();
    await svc.egress.close();
    await database.close();
  });
  return app;
}

export { ConfigError };
