import type { FastifyInstance } from 'fastify';
import { createServer, type AddressInfo } from 'node:net';
import { configFromFlags, type Command } from './command.js';
import { exitWithNpm, npmParents } from '../parent-watch.js';

export interface ServeFlags {
  config?: string;
  port?: string;
  host?: string;
  'data-dir'?: string;
}

function freePort(host: string): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const port = (probe.address() as AddressInfo).port;
      probe.close(() => resolvePort(port));
    });
  });
}

/**
 * Say where the gateway listens and how to start. A person at a terminal gets text on
 * stderr; anything else (a pipe, a file, a log collector) gets one JSON log line like every
 * other event, with the same facts as fields. That line is written even when log.level is
 * above info (not when silent): it is the line scripts and supervisors wait for.
 */
function announce(app: FastifyInstance, url: string, dataDir: string): void {
  const activate = `curl -s -X POST ${url}/v1/activate -H 'content-type: application/json' -d '{}'`;
  const ready = `svc-gateway ${app.svc.version} listening on ${url} (database: ${app.svc.dialect}, data: ${dataDir})`;
  if (process.stdout.isTTY) {
    process.stderr.write(`${ready}\nActivate an account:\n  ${activate}\nAPI docs: ${url}/docs\n`);
  } else if (app.log.level !== 'silent') {
    app.log
      .child({}, { level: 'info' })
      .info(
        { url, version: app.svc.version, database: app.svc.dialect, data_dir: dataDir, activate, docs: `${url}/docs` },
        ready
      );
  }
}

/** Run the gateway until SIGINT/SIGTERM; then stop accepting, finish in-flight calls, close the database. */
export async function serve(flags: ServeFlags): Promise<FastifyInstance> {
  const parents = npmParents();
  const [{ config, baseDir }, { buildApp }] = await Promise.all([configFromFlags(flags), import('../../core/app.js')]);
  if (config.server.port === 0) {
    // Port 0 (any free port): pick it before the app is built, so public_url, and every URL
    // handed out from it (checkout links, presigned URLs), names the port actually served.
    const port = await freePort(config.server.host);
    if (config.server.public_url.endsWith(':0'))
      config.server.public_url = config.server.public_url.replace(/:0$/, `:${port}`);
    config.server.port = port;
  }
  const app = await buildApp(config, { baseDir });
  await app.ready();
  // Fastify logs "Server listening at" once per address; the ready line below is that event,
  // so its own line is left out (the root logger only, for the moment of binding).
  const level = app.log.level;
  app.log.level = 'silent';
  try {
    await app.listen({ host: config.server.host, port: config.server.port });
  } finally {
    app.log.level = level;
  }
  announce(app, config.server.public_url, config.data_dir);
  let closing = false;
  const stop = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      app.log.error('shutdown took too long; exiting');
      process.exit(1);
    }, config.server.shutdown_grace_ms);
    force.unref();
    try {
      await app.close();
      process.exit(0);
    } catch (e) {
      app.log.error({ err: e }, 'error while shutting down');
      process.exit(1);
    }
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
  exitWithNpm(() => void stop('npm exited'), process.env, 500, parents);
  return app;
}

export const serveCommand: Command = {
  name: 'serve',
  summary: 'run the gateway (the default command)',
  help: `Usage: svc-gateway serve [--config FILE] [--port N] [--host H] [--data-dir DIR]

Runs the gateway. With no config it serves on 127.0.0.1:8787 with SQLite and files in ./.svc.
On SIGTERM or SIGINT it stops accepting connections, lets calls in flight finish (up to
server.shutdown_grace_ms), closes the database and exits 0; started by npm (npm start, npx)
it does the same when npm exits. Logs are JSON lines on stdout; the address and the curl
line that activates an account go to stderr as text when stdout is a terminal, else into
the "listening on" log line.
Environment: SVC_CONFIG SVC_PORT SVC_HOST SVC_DATA_DIR SVC_DATABASE_URL SVC_REDIS_URL SVC_ADMIN_KEY SVC_PUBLIC_URL
`,
  options: {
    config: { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    'data-dir': { type: 'string' },
  },
  async run(flags) {
    await serve(flags as ServeFlags);
    return -1; // keeps running until a signal
  },
};
