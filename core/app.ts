import { VendorNetwork } from './egress/vendor-agent.js';
import { exposedGc, IdleCollector } from './isolation/idle-gc.js';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { CoreConfig } from '../config/schema.js';
import { openDatabase } from './db/open.js';
import { migrateModule } from './db/migrate.js';
import { createLogger } from './logger.js';
import { lazyChildLogger } from './lazy-child-logger.js';
import { newId } from './ids.js';
import { KeyStore } from './auth/keys.js';
import { TokenSigner } from './auth/tokens.js';
import { loadMasterKey } from './auth/master-key.js';
import { deriveKey } from './auth/sealed.js';
import { Wallet } from './wallet/wallet.js';
import { Router } from './router/router.js';
import { VendorRegistry } from './router/registry.js';
import { RateLimiter } from './http/rate-limit.js';
import { LocalBus, type Bus } from './bus/bus.js';
import { validatorCompiler } from './http/validation.js';
import { serializerCompiler } from './http/serialization.js';
import { frameworkErrors, installErrorHandling, MAX_PARAM_LENGTH } from './http/error-handler.js';
import { trackRouteMethods } from './http/method-not-allowed.js';
import { installAuth } from './http/auth-hook.js';
import { installIdempotency } from './http/idempotency.js';
import { installMeterHeaders } from './http/meter-headers.js';
import { installApiCors } from './http/cors.js';
import {
  loadAreas,
  resolveVendor,
  checkConfig,
  redact,
  unconfiguredBuiltins,
  declaredCapabilities,
} from './plugin-loader.js';
import { secretValues } from './router/scrub.js';
import { registerSystemRoutes } from './system-routes.js';
import { collectRoutes } from './discovery/route-registry.js';
import { installExpectContinue } from './http/expect-continue.js';
import { registerOpenApi } from './openapi/register.js';
import { registerDiscovery } from './discovery/register.js';
import { registerMetrics } from './metrics/metrics.js';
import { VERSION } from './version.js';
import { Egress } from './egress/egress.js';
import type { VendorContext } from './vendor-api.js';
import { prepareDataDir } from './data-dir.js';
import { JobsEngine } from './jobs/engine.js';
import { registerHoldSweep } from './wallet/hold-sweep.js';
import { Retention } from './retention/retention.js';
import { Events } from './events/events.js';
import { Outbox } from './outbox/outbox.js';
import { ResultStore } from './results/result-store.js';
import { Sockets } from './http/sockets.js';
import { Services } from './services/services.js';
import { coreModules } from './db/core-modules.js';
import type { CapabilitySpec } from './capability-spec.js';
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
  const loose = prepareDataDir(config.data_dir);
  if (loose) {
    const what = loose.error ? `could not be tightened to 700 (${loose.error})` : 'tightened to 700';
    log.warn({ data_dir: config.data_dir, mode: loose.was }, `data dir was mode ${loose.was}: ${what}`);
  }
  const baseDir = opts.baseDir ?? process.cwd();
  const areas = await loadAreas(config, baseDir);

  const capabilities = new Map<string, CapabilitySpec>();
  for (const a of areas) for (const [k, v] of Object.entries(a.def.capabilities ?? {})) capabilities.set(k, v);

  const egress = new Egress(config.egress, {
    reach: {
      listenHost: config.server.host,
      publicUrl: config.server.public_url,
      trustProxy: config.server.trust_proxy,
    },
  });
  const vendorNetwork = new VendorNetwork(egress);
  const vendorContext = (instanceId: string, vendorConfig: unknown): VendorContext => ({
    instanceId,
    ...vendorNetwork.for(vendorConfig),
    publicUrl: config.server.public_url,
    dataDir: config.data_dir,
    log: log.child({ vendor: instanceId }),
    egressProxy: () => egress.proxyUrl(),
  });
  const vendors = new VendorRegistry(declaredCapabilities(areas));
  const configuredAdapters = new Set<string>();
  for (const [i, v] of config.vendors.entries()) {
    const where = `vendors[${i}]`;
    const def = await resolveVendor(v.use, baseDir, `${where}.use`);
    const vcfg = checkConfig(def.configSchema, v.config, `${where}.config`);
    configuredAdapters.add(def.name);
    let instance;
    try {
      instance = await def.create(vcfg as any, vendorContext(v.id, vcfg));
    } catch (e) {
      throw new ConfigError(`${where}: vendor "${v.id}" (${v.use}) failed to start: ${(e as Error).message}`);
    }
    vendors.add({
      id: v.id,
      adapter: def.name,
      regions: v.regions ?? instance.regions ?? def.regions ?? ['global'],
      def,
      instance,
      redactedConfig: redact(def.configSchema, vcfg),
      secrets: secretValues(def.configSchema, vcfg),
    });
  }
  // Embedded defaults serve every capability no configured instance of theirs already serves.
  for (const def of unconfiguredBuiltins(configuredAdapters).filter((d) => d.embedded)) {
    const vcfg = checkConfig(def.configSchema, {}, `vendors.${def.name}`);
    const instance = await def.create(vcfg as any, vendorContext(def.name, vcfg));
    vendors.add({
      id: def.name,
      adapter: def.name,
      regions: instance.regions ?? def.regions ?? ['global'],
      def,
      instance,
      redactedConfig: redact(def.configSchema, vcfg),
    });
  }
  // Adapters that take BYOK credentials but that the operator did not configure still serve
  // callers who register their own key (POST /v1/byok): one BYOK-only instance each, at the
  // vendor's public endpoint. openai-compatible has no public endpoint of its own.
  for (const def of unconfiguredBuiltins(configuredAdapters).filter((d) => d.byok && d.name !== 'openai-compatible')) {
    const id = `byok-${def.name}`;
    const vcfg = checkConfig(def.configSchema, {}, `vendors.${id}`);
    const instance = await def.create(vcfg as any, vendorContext(id, vcfg));
    vendors.add({
      id,
      adapter: def.name,
      regions: instance.regions ?? def.regions ?? ['global'],
      def,
      instance,
      redactedConfig: redact(def.configSchema, vcfg),
      byokOnly: true,
    });
  }
  for (const [cap, route] of Object.entries(config.routes)) vendors.setRoute(cap, route.targets, route.strategy);

  const database = await openDatabase(config.database.url, { poolSize: config.database.pool_size, owner: true });
  try {
    for (const m of coreModules) await migrateModule(database, m.name, m.migrations);
    for (const a of areas) if (a.def.migrations) await migrateModule(database, a.def.name, a.def.migrations);
  } catch (e) {
    await database.close();
    throw e;
  }

  let bus: Bus = new LocalBus();
  let rateLimits: Svc['rateLimits'] = new RateLimiter();
  if (config.redis.url) {
    // Loaded only when configured: a one-node gateway never pays for the Redis client.
    const [{ RedisBus }, { RedisRateLimiter }] = await Promise.all([
      import('./bus/redis-bus.js'),
      import('./http/redis-rate-limit.js'),
    ]);
    const rb = new RedisBus(config.redis.url, log.child({ part: 'bus' }));
    try {
      await rb.connect();
    } catch (e) {
      await rb.close();
      await database.close();
      throw new ConfigError(
        `redis.url: cannot connect to ${config.redis.url.replace(/\/\/[^@]*@/, '//***@')}: ${(e as Error).message}`
      );
    }
    bus = rb;
    rateLimits = new RedisRateLimiter(rb.client);
  }

  const masterKey = loadMasterKey(config.master_key, config.data_dir);
  const wallet = new Wallet(
    database.db,
    database.sync,
    config.wallet.hold_grace_seconds * 1000,
    database.owned,
    log.child({ part: 'wallet' })
  );
  const keys = new KeyStore(database.db);
  // Key revocation, rotation and tier changes reach every node's key cache at once.
  keys.onInvalidate = (accountId) =>
    void bus.publish('keys.invalidate', { accountId }).catch((e) => log.warn({ err: e }, 'bus publish failed'));
  const unsubscribeKeys = await bus.subscribe('keys.invalidate', (m) =>
    keys.dropAccount((m as { accountId: string }).accountId)
  );
  // One gateway owns a SQLite file (owner-lock.ts): its engine is the only one on the database.
  const jobs = new JobsEngine(database.db, database.dialect, config.jobs, log.child({ part: 'jobs' }), {
    soleNode: database.dialect === 'sqlite',
  });
  const router = new Router(vendors, wallet, capabilities, config.wallet.markup, log.child({ part: 'router' }));
  const events = new Events();
  const outboxLog = log.child({ part: 'outbox' });
  const outbox = new Outbox({ db: database.db, router, wallet, vendors, events, jobs, log: outboxLog });
  const svc: Svc = {
    config,
    db: database.db,
    dialect: database.dialect,
    log,
    keys,
    tokens: new TokenSigner(masterKey),
    masterKey,
    idempotencyKey: deriveKey(masterKey, 'svc-gateway idempotency salt v1', 'idempotent responses v1'),
    wallet,
    router,
    results: new ResultStore(database.db, router, log.child({ part: 'results' }), database.sync),
    vendors,
    rateLimits,
    bus,
    egress,
    jobs,
    retention: new Retention(database.db, jobs, config.retention, log.child({ part: 'retention' })),
    events,
    outbox,
    sockets: new Sockets(),
    services: new Services(),
    areas,
    capabilities,
    version: VERSION,
    startedAt: Date.now(),
  };
  svc.retention.add(outbox.retention());

  const loopback = svc.egress.loopback;
  log.info(
    { allow_loopback: loopback.allowed },
    `egress: loopback targets ${loopback.allowed ? 'allowed' : 'refused'} (${loopback.why})`
  );

  const app = Fastify({
    loggerInstance: log,
    childLoggerFactory: lazyChildLogger,
    // Fastify's two log lines a request are built even when their level is off. At a terminal
    // they bury the banner and the errors a person is looking for: logged there only when asked.
    logController: new LogController({
      disableRequestLogging:
        !(log as { isLevelEnabled?: (l: string) => boolean }).isLevelEnabled?.('info')
        || !(config.log.requests === 'auto' ? !process.stdout.isTTY : config.log.requests),
    }),
    bodyLimit: config.limits.body_bytes,
    trustProxy: config.server.trust_proxy,
    requestIdHeader: false,
    genReqId: (req) => {
      const h = req.headers['x-request-id'];
      return typeof h === 'string' && REQUEST_ID.test(h) ? h : newId('req');
    },
    forceCloseConnections: 'idle',
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    // A URL the router refuses (bad %-escape, over-long parameter) still gets the error shape.
    frameworkErrors,
    // Upgrades (realtime, tunnels) and Hosts claimed by an area are served beside Fastify's router.
    serverFactory: svc.sockets.serverFactory,
  }) as unknown as FastifyInstance; // pino's Logger is wider than FastifyBaseLogger
  app.decorate('svc', svc);
  const gc = config.server.idle_gc_seconds > 0 ? exposedGc() : undefined;
  const idleGc = gc
    ? new IdleCollector({ everyMs: config.server.idle_gc_seconds * 1000, minGrowthBytes: 16 << 20, gc })
    : undefined;
  idleGc?.start();
  // Before the server closes: it waits for upgraded sockets, which only their owners can end.
  app.addHook('preClose', () => svc.sockets.close());
  app.addHook('onClose', async () => {
    idleGc?.close();
    // A step slower than a second is logged: a shutdown that runs into server.shutdown_grace_ms
    // (forced exit) then says which step held it.
    const step = async (name: string, fn: () => unknown) => {
      const started = performance.now();
      await fn();
      const ms = Math.round(performance.now() - started);
      if (ms > 1000) app.log.warn({ step: name, ms }, 'shutdown: a slow step');
    };
    await step('jobs', () => svc.jobs.stop());
    svc.results.stop();
    for (const a of [...areas].reverse()) await step(`area ${a.def.name}`, () => a.def.stop?.());
    await step('vendors', () => vendors.closeAll());
    await step('egress', async () => {
      await vendorNetwork.close();
      await svc.egress.close();
    });
    await unsubscribeKeys();
    await step('bus', () => bus.close());
    await step('database', () => database.close());
  });
  try {
    await registerEverything(app, svc);
  } catch (e) {
    // A plugin that fails to register must not leave the database pool (and the process) open.
    await app.close().catch(() => undefined);
    throw e;
  }
  return app;
}

async function registerEverything(app: FastifyInstance, svc: Svc): Promise<void> {
  const { areas, log } = svc;
  // JSON only, as the conventions say; areas that take raw bytes add parsers in their scope.
  app.removeContentTypeParser('text/plain');
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  // CORS answers preflights in a hook: after the one that sets x-request-id, before the
  // route tracker (its catch-all OPTIONS route must not turn every 404 into a 405).
  installMeterHeaders(app);
  await installApiCors(app, svc.config.server.cors);
  installErrorHandling(app, trackRouteMethods(app));
  installAuth(app);
  installExpectContinue(app);
  installIdempotency(app);
  const holdSweep = registerHoldSweep(svc);
  registerMetrics(app);
  // Before any documented route: the route registry and @fastify/swagger collect with onRoute.
  const routes = collectRoutes(app, !!svc.config.admin_key);
  await registerOpenApi(app, routes);
  await registerDiscovery(app, routes);
  await registerSystemRoutes(app);

  for (const a of areas) {
    const ctx = { svc, config: a.config, log: log.child({ area: a.def.name }) };
    await app.register(async (scope) => {
      await a.def.register(scope, ctx);
    });
  }

  app.addHook('onReady', async () => {
    svc.results.start();
    for (const a of areas) await a.def.start?.({ svc, config: a.config, log: log.child({ area: a.def.name }) });
    await holdSweep.start();
    await svc.retention.start();
    svc.jobs.start();
  });
}

export { ConfigError };
