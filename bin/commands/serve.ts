import type { FastifyInstance } from 'fastify';
import { dirname, resolve } from 'node:path';
import { createServer, type AddressInfo } from 'node:net';
import type { Command } from './command.js';

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

/** Run the gateway until SIGINT/SIGTERM; then stop accepting, finish in-flight calls, close the database. */
export async function serve(flags: ServeFlags): Promise<FastifyInstance> {
  const [{ loadConfig }, { buildApp }] = await Promise.all([import('../../config/load.js'), import('../../core/app.js')]);
  const file = flags.config ?? process.env.SVC_CONFIG;
  const config = loadConfig({
    file,
    overrides: { port: flags.port !== undefined ? Number(flags.port) : undefined, host: flags.host, data_dir: flags['data-dir'] },
  });
  if (config.server.port === 0) {
    // Port 0 (any free port): pick it before the app is built, so public_url, and every URL
    // handed out from it (checkout links, presigned URLs), names the port actually served.
    const port = await freePort(config.server.host);
    if (config.server.public_url.endsWith(':0')) config.server.public_url = config.server.public_url.replace(/:0$/, `:${port}`);
    config.server.port = port;
  }
  const app = await buildApp(config, { baseDir: file ? dirname(resolve(file)) : process.cwd() });
  await app.listen({ host: config.server.host, port: config.server.port });
  const url = config.server.public_url;
  process.stdout.write(
    `svc-gateway ${app.svc.version} listening on ${url} (database: ${app.svc.dialect}, data: ${config.data_dir})\n` +
    `Activate an account:\n  curl -s -X POST ${url}/v1/activate -H 'content-type: application/json' -d '{}'\n` +
    `API docs: ${url}/docs\n`,
  );
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
  return app;
}

export const serveCommand: Command = {
  name: 'serve',
  summary: 'run the gateway (the default command)',
  help: `Usage: svc-gateway serve [--config FILE] [--port N] [--host H] [--data-dir DIR]

Runs the gateway. With no config it serves on 127.0.0.1:8787 with SQLite and files in ./.svc.
On SIGTERM or SIGINT it stops accepting connections, lets calls in flight finish (up to
server.shutdown_grace_ms), closes the database and exits 0.
Environment: SVC_CONFIG SVC_PORT SVC_HOST SVC_DATA_DIR SVC_DATABASE_URL SVC_REDIS_URL SVC_ADMIN_KEY SVC_PUBLIC_URL
`,
  options: { config: { type: 'string' }, port: { type: 'string' }, host: { type: 'string' }, 'data-dir': { type: 'string' } },
  async run(flags) {
    await serve(flags as ServeFlags);
    return -1; // keeps running until a signal
  },
};
