import { Counter } from 'prom-client';
import { WebSocketServer } from 'ws';
import { defineArea, newId } from '../../core/kit/area.js';
import { Channels } from './channels.js';
import { sharedConnections } from './connection-count.js';
import { RealtimeConfig } from './config.js';
import { History } from './history.js';
import { Hub } from './hub.js';
import { RealtimeMeter } from './meter.js';
import { realtimeMigrations } from './migrations.js';
import { nativeUpgrade } from './native-socket.js';
import { Presence } from './presence.js';
import { registerPusherRest } from './pusher-rest.js';
import { pusherUpgrade } from './pusher-socket.js';
import { PusherApps } from './pusher-apps.js';
import { registerRealtimeRoutes, type RealtimeDeps } from './routes.js';

/** Realtime: channels over the gateway's own WebSocket server, fanned out between nodes by the bus. */
export default defineArea({
  name: 'realtime',
  configSchema: RealtimeConfig,
  migrations: realtimeMigrations,
  register(app, ctx) {
    const { svc, config: cfg, log } = ctx;
    // Per app, not per module: one process may run several gateways (tests do).
    const nodeId = newId('node');
    const meter = new RealtimeMeter(svc.wallet, log, nodeId, {
      perMillionMessagesUsd: cfg.price_per_million_messages_usd,
      perMillionConnectionMinutesUsd: cfg.price_per_million_connection_minutes_usd,
    });
    const hub = new Hub(
      nodeId,
      svc.bus,
      log,
      new History(svc.db, cfg.history_seconds * 1000, cfg.history_messages),
      new Presence(svc.db, nodeId, cfg.presence_timeout_seconds * 1000),
      meter
    );
    const channels = new Channels(svc.db, svc.bus);
    const slowConsumers = new Counter({
      name: 'realtime_slow_consumer_closes_total',
      help: 'Sockets closed with 4100: more than max_buffered_bytes waited to be written to them.',
      labelNames: ['protocol'] as const,
      registers: [app.metrics.registry],
    });
    const bounds = (protocol: 'native' | 'pusher') => ({
      maxBuffered: cfg.max_buffered_bytes,
      // As long as a silent peer is kept: one that has read nothing in that time is gone.
      slowDrainMs: cfg.activity_timeout_seconds * 1000,
      onSlow: () => slowConsumers.inc({ protocol }),
    });
    const apps = new PusherApps(svc.db, svc.masterKey);
    const deps: RealtimeDeps = { svc, cfg, hub, channels, apps, bounds };
    registerRealtimeRoutes(app, deps);
    registerPusherRest(app, deps);
    // ws destroys a closing socket after closeTimeout (30 s by default): not before a slow consumer's
    // drain ends. @types/ws does not know the option yet; ws 8 reads it.
    const closeTimeout = Math.max(30_000, cfg.activity_timeout_seconds * 1000);
    const wsOptions = { noServer: true, maxPayload: cfg.max_data_bytes + 64 * 1024, closeTimeout };
    const wss = new WebSocketServer(wsOptions);
    const timers: NodeJS.Timeout[] = [];
    const every = (ms: number, what: string, fn: () => Promise<unknown>) => {
      const t = setInterval(() => void fn().catch((e) => log.warn({ err: e }, `realtime ${what} failed`)), ms);
      t.unref();
      timers.push(t);
    };
    app.addHook('onReady', async () => {
      const ttl = cfg.presence_timeout_seconds * 1000;
      hub.shared = await sharedConnections(svc.config.redis.url || undefined, nodeId, ttl, log);
      await channels.start();
      every((cfg.presence_timeout_seconds * 1000) / 3, 'heartbeat', () => hub.tick());
      every(cfg.meter_interval_seconds * 1000, 'metering', () => meter.flush());
      every(cfg.activity_timeout_seconds * 1000, 'activity check', async () => hub.checkSockets());
    });
    // Before the HTTP server closes (it waits for upgraded sockets): the sockets end, this
    // node's presence members leave at once, and what they used is charged.
    svc.sockets.onUpgrade({
      prefix: '/v1/realtime/ws',
      handle: nativeUpgrade(deps, wss),
      close: async () => {
        for (const t of timers) clearInterval(t);
        await hub.close().catch((e) => log.warn({ err: e }, 'realtime: closing the hub failed'));
        await meter.flush().catch((e) => log.warn({ err: e }, 'realtime: usage not charged at shutdown'));
        await channels.stop().catch(() => undefined);
        wss.close();
      },
    });
    // Pusher clients connect to `{wsPath}/app/{key}`: at the host root by default.
    svc.sockets.onUpgrade({ prefix: '/app', handle: pusherUpgrade(deps, wss) });
  },
});
