#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { ConfigError } from '../config/load.js';
import { serve } from './commands/serve.js';

const HELP: Record<string, string> = {
  main: `svc-gateway: one HTTP API for sixteen infrastructure areas, behind one key.

Usage: svc-gateway [command] [options]

Commands:
  serve       run the gateway (the default)
  --help      this text; "svc-gateway COMMAND --help" for one command

Common options:
  --config FILE     YAML config (or SVC_CONFIG); none = embedded defaults
`,
  serve: `Usage: svc-gateway serve [--config FILE] [--port N] [--host H] [--data-dir DIR]

Runs the gateway. With no config it serves on 127.0.0.1:8787 with SQLite and files in ./.svc.
Environment: SVC_PORT SVC_HOST SVC_DATA_DIR SVC_DATABASE_URL SVC_REDIS_URL SVC_ADMIN_KEY SVC_PUBLIC_URL
`,
};

async function main(argv: string[]): Promise<number> {
  const first = argv[0] && !argv[0].startsWith('-') ? argv[0] : 'serve';
  const rest = argv[0] && !argv[0].startsWith('-') ? argv.slice(1) : argv;
  if (first === 'help' || (argv[0] === '--help' || argv[0] === '-h')) {
    process.stdout.write(HELP.main);
    return 0;
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      config: { type: 'string' }, port: { type: 'string' }, host: { type: 'string' }, 'data-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(HELP[first] ?? HELP.main);
    return 0;
  }
  switch (first) {
    case 'serve':
      await serve(values);
      return -1; // keeps running
    default:
      process.stderr.write(`unknown command "${first}"\n\n${HELP.main}`);
      return 2;
  }
}

main(process.argv.slice(2)).then((code) => {
  if (code >= 0) process.exit(code);
}, (e) => {
  if (e instanceof ConfigError) process.stderr.write(`svc-gateway: ${e.message}\n`);
  else process.stderr.write(`svc-gateway: ${(e as Error)?.stack ?? e}\n`);
  process.exit(e instanceof ConfigError || (e as any)?.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? 2 : 1);
});
