import { Writable } from 'node:stream';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../config/load.js';
import { buildApp } from '../../core/app.js';
import { freshDatabaseUrl } from './app.js';
import type { Tap } from './tap.js';

/**
 * A gateway logging at trace level into memory, for tests that a secret never reaches the log:
 * `logged()` is everything written so far. Closed and removed at teardown.
 */
export async function traceLoggedApp(
  t: Tap,
  object: Record<string, unknown>
): Promise<{ app: FastifyInstance; logged(): string }> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-trace-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  let text = '';
  const sink = new Writable({
    write(chunk, _enc, cb) {
      text += chunk.toString();
      cb();
    },
  });
  const config = loadConfig({
    env: {},
    object: { data_dir: dir, database: { url: await freshDatabaseUrl(t, dir) }, log: { level: 'trace' }, ...object },
  });
  const app = await buildApp(config, { logger: pino({ level: 'trace' }, sink) });
  t.teardown(() => app.close());
  await app.ready();
  return { app, logged: () => text };
}
