#!/usr/bin/env -S node --max-semi-space-size=8 --initial-old-space-size=128 --expose-gc
import { parseArgs } from 'node:util';
import { UsageError, type Command } from './commands/command.js';
import { serveCommand } from './commands/serve.js';
import { activateCommand } from './commands/activate.js';
import { migrateCommand } from './commands/migrate.js';
import { openapiCommand } from './commands/openapi.js';
import { doctorCommand } from './commands/doctor.js';
import { tunnelCommand } from './commands/tunnel.js';

const COMMANDS: Command[] = [
  serveCommand,
  activateCommand,
  migrateCommand,
  openapiCommand,
  doctorCommand,
  tunnelCommand,
];

// The areas named here are the built-in ones (plugins/builtin.ts); a test keeps them in step.
const MAIN_HELP = `svc-gateway: one HTTP API under /v1, behind one key, for the areas built in today:
account (and wallet), ai, byok, image, pdf, scheduling, storage (with an S3-compatible endpoint at /s3), email, sms,
observability, billing, realtime (Pusher-compatible), public-url (tunnels), captcha, video, analytics.

Usage: svc-gateway [command] [options]

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(10)}  ${c.summary}`).join('\n')}

"svc-gateway COMMAND --help" describes one command. With no command, serve runs.

Common options:
  --config FILE     YAML config (or SVC_CONFIG); none = embedded defaults
  --port N          serve: port to listen on (or SVC_PORT; default 8787)

Exit codes: 0 ok, 1 failure, 2 usage or config error.
`;

// By name: config/load.js is loaded only by the commands that read a config.
const isConfigError = (e: unknown): e is Error => (e as Error)?.name === 'ConfigError';

const USAGE_CODES = new Set([
  'ERR_PARSE_ARGS_UNKNOWN_OPTION',
  'ERR_PARSE_ARGS_INVALID_OPTION_VALUE',
  'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL',
]);

async function main(argv: string[]): Promise<number> {
  if (argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    const about = COMMANDS.find((c) => c.name === argv[1]);
    process.stdout.write(about ? about.help : MAIN_HELP);
    return 0;
  }
  const named = argv[0] !== undefined && !argv[0].startsWith('-');
  const command = named ? COMMANDS.find((c) => c.name === argv[0]) : serveCommand;
  if (!command) {
    process.stderr.write(`svc-gateway: unknown command "${argv[0]}"\n\n${MAIN_HELP}`);
    return 2;
  }
  const args = named ? argv.slice(1) : argv;
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: { ...command.options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: !!command.positionals,
      strict: true,
    });
  } catch (e) {
    if (!USAGE_CODES.has((e as { code?: string }).code ?? '')) throw e;
    process.stderr.write(`svc-gateway ${command.name}: ${(e as Error).message}\n\n${command.help}`);
    return 2;
  }
  if (parsed.values.help) {
    process.stdout.write(command.help);
    return 0;
  }
  try {
    return await command.run(parsed.values as Record<string, string | boolean | undefined>, parsed.positionals);
  } catch (e) {
    if (e instanceof UsageError) process.stderr.write(`svc-gateway ${command.name}: ${e.message}\n\n${command.help}`);
    else if (isConfigError(e)) process.stderr.write(`svc-gateway ${command.name}: ${e.message}\n`);
    else throw e;
    return 2;
  }
}

/**
 * Exit once what was written has reached the pipe: stdout to a pipe is asynchronous, and
 * process.exit() would cut off a large answer (the OpenAPI document) mid-way.
 */
function exit(code: number): void {
  process.exitCode = code;
  process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) exit(code);
  },
  (e) => {
    if (e instanceof UsageError) {
      process.stderr.write(`svc-gateway: ${e.message}\n\n${MAIN_HELP}`);
      exit(2);
    }
    if (isConfigError(e)) {
      process.stderr.write(`svc-gateway: ${e.message}\n`);
      exit(2);
    }
    // SvcError and the like carry a message meant for people; anything else is a bug worth a stack.
    const err = e as { name?: string; message?: string; stack?: string; code?: string; requestId?: string };
    if (err?.name === 'SvcError')
      process.stderr.write(
        `svc-gateway: ${err.message} (${err.code}${err.requestId ? `, request ${err.requestId}` : ''})\n`
      );
    else process.stderr.write(`svc-gateway: ${err?.stack ?? e}\n`);
    exit(1);
  }
);
