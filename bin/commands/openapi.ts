import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CONFIG_OPTION, configFromFlags, err, out, type Command } from './command.js';

/**
 * Print the OpenAPI document of the gateway the config describes, with its areas and
 * plugins, without listening and without touching its database: the app is built on an
 * in-memory database in a scratch data dir that is removed afterwards.
 */
export const openapiCommand: Command = {
  name: 'openapi',
  summary: 'print the OpenAPI 3.1 document (GET /v1/openapi.json) without starting a server',
  help: `Usage: svc-gateway openapi [--config FILE] [--out FILE]

Builds the gateway the config describes (areas, third-party plugins) without listening and
prints GET /v1/openapi.json. Its database and data dir are left alone.

Options:
  --config FILE   YAML config (or SVC_CONFIG)
  --out FILE      write the document there instead of stdout
`,
  options: { ...CONFIG_OPTION, out: { type: 'string' } },
  async run(flags) {
    const scratch = mkdtempSync(join(tmpdir(), 'svc-openapi-'));
    try {
      const [{ buildApp }, { createLogger }] = await Promise.all([
        import('../../core/app.js'),
        import('../../core/logger.js'),
      ]);
      const { config, baseDir } = await configFromFlags(flags, {
        ...process.env,
        SVC_DATABASE_URL: 'sqlite::memory:',
        SVC_DATA_DIR: scratch,
      });
      const app = await buildApp(config, { baseDir, logger: createLogger('silent') });
      try {
        const res = await app.inject({ method: 'GET', url: '/v1/openapi.json' });
        if (res.statusCode === 404) {
          err('svc-gateway openapi: this gateway has no GET /v1/openapi.json route, so there is no document to print.');
          return 1;
        }
        if (res.statusCode !== 200) {
          err(`svc-gateway openapi: GET /v1/openapi.json answered ${res.statusCode}: ${res.body.slice(0, 500)}`);
          return 1;
        }
        const doc = res.json() as { paths?: Record<string, unknown> };
        const text = `${JSON.stringify(doc, null, 2)}\n`;
        if (typeof flags.out === 'string') {
          writeFileSync(resolve(flags.out), text);
          out(`Wrote the OpenAPI document (${Object.keys(doc.paths ?? {}).length} paths) to ${resolve(flags.out)}.`);
        } else {
          process.stdout.write(text);
        }
        return 0;
      } finally {
        await app.close();
      }
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  },
};
