import type { ParseArgsConfig } from 'node:util';
import { dirname, resolve } from 'node:path';
import type { CoreConfig } from '../../config/schema.js';

/**
 * One subcommand: its flags, its help text, and what it does. Command files import the
 * gateway's modules inside run(), so `--help` and usage errors answer without loading them.
 */
export interface Command {
  name: string;
  /** One line for the top-level help. */
  summary: string;
  help: string;
  options: NonNullable<ParseArgsConfig['options']>;
  positionals?: boolean;
  /** Resolves to the exit code: 0 ok, 1 failure, 2 usage or config error; -1 keeps the process running. */
  run(values: Record<string, string | boolean | undefined>, positionals: string[]): Promise<number>;
}

/** A wrong flag or argument: exit code 2 with the command's help. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export const CONFIG_OPTION = { config: { type: 'string' } } as const;

type ConfigFlags = { config?: unknown; port?: unknown; host?: unknown; 'data-dir'?: unknown };

/**
 * The config a command runs with: --config, else SVC_CONFIG, else the embedded defaults, then
 * serve's --port, --host and --data-dir. Every command reads it here, so `doctor` judges a
 * file exactly as `serve` will load it.
 */
export async function configFromFlags(
  flags: ConfigFlags,
  env: NodeJS.ProcessEnv = process.env
): Promise<{ config: CoreConfig; baseDir: string; file?: string }> {
  const { loadConfig } = await import('../../config/load.js');
  const file = typeof flags.config === 'string' ? flags.config : env.SVC_CONFIG;
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const port = str(flags.port);
  const config = loadConfig({
    file,
    env,
    overrides: {
      port: port === undefined ? undefined : Number(port),
      host: str(flags.host),
      data_dir: str(flags['data-dir']),
    },
  });
  return { config, baseDir: file ? dirname(resolve(file)) : process.cwd(), file };
}

export function out(line = ''): void {
  process.stdout.write(`${line}\n`);
}

export function err(line: string): void {
  process.stderr.write(`${line}\n`);
}
