import { defineArea } from '../../core/kit/area.js';
import { PublicUrlConfig } from './config.js';
import { CONTROL_PATH, TunnelRegistry } from './control.js';
import { registerDomainRoutes } from './domain-routes.js';
import { DomainStore } from './domains.js';
import { NodeForwarder } from './forward.js';
import { TunnelMeter } from './meter.js';
import { publicUrlMigrations } from './migrations.js';
import { TunnelProxy } from './proxy.js';
import { registerUrlRoutes } from './routes.js';
import { UrlStore } from './store.js';

/** Public URLs: the gateway is the tunnel server for `svc-gateway tunnel PORT` (docs/public-url.md). */
export default defineArea({
  name: 'public-url',
  configSchema: PublicUrlConfig,
  migrations: publicUrlMigrations,
  register(app, ctx) {
    const svc = ctx.svc;
    const cfg = ctx.config;
    const urls = new UrlStore(svc.db, cfg, svc.config.server.public_url);
    const domains = new DomainStore(svc.db, cfg, urls);
    const tunnels = new TunnelRegistry(svc, cfg, urls, ctx.log);
    const m = new TunnelMeter(svc.db, svc.wallet, urls, cfg, ctx.log);
    const proxy = new TunnelProxy(cfg, urls, domains, tunnels, m, new NodeForwarder(svc.masterKey));
    svc.sockets.onUpgrade({ prefix: CONTROL_PATH, handle: tunnels.upgrade, close: () => tunnels.close() });
    svc.sockets.claimHosts(proxy);
    registerUrlRoutes(app, svc, cfg, urls, (urlId, accountId) => tunnels.claimed(urlId, accountId));
    registerDomainRoutes(app, svc, domains);
    app.addHook('onReady', async () => {
      await domains.load();
      m.start();
    });
    app.addHook('onClose', () => m.stop());
  },
});
