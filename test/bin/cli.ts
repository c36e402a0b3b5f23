import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freshDatabaseUrl } from '../helpers/app.js';

// Runs bin/svc-gateway.ts as a real process, from source: tap's TypeScript loader travels in
// process.execArgv, so no build step is needed.

export const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const CLI = join(ROOT, 'bin', 'svc-gateway.ts');

type Tap = { teardown(fn: () => unknown): void };

export interface CliEnv {
  /** Temp HOME, with XDG_CONFIG_HOME, data dir and database inside it (a schema on PostgreSQL). */
  env: NodeJS.ProcessEnv;
  home: string;
  dataDir: string;
  databaseUrl: string;
}

/** A private HOME and data dir for one test, removed at teardown; SVC_* from the outside dropped. */
export async function cliEnv(t: Tap): Promise<CliEnv> {
  const home = mkdtempSync(join(tmpdir(), 'svc-cli-'));
  t.teardown(() => rmSync(home, { recursive: true, force: true }));
  const dataDir = join(home, 'data');
  mkdirSync(dataDir);
  const databaseUrl = await freshDatabaseUrl(t, dataDir);
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SVC_') && k !== 'XDG_CONFIG_HOME') env[k] = v;
  Object.assign(env, { HOME: home, XDG_CONFIG_HOME: join(home, 'xdg'), SVC_DATA_DIR: dataDir, SVC_DATABASE_URL: databaseUrl, SVC_LOG_LEVEL: 'warn' });
  return { env, home, dataDir, databaseUrl };
}

export function startCli(args: string[], opts: { env: NodeJS.ProcessEnv; cwd?: string }): ChildProcess {
  return spawn(process.execPath, [...process.execArgv, CLI, ...args], { env: opts.env, cwd: opts.cwd ?? ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Run the CLI to its end (killed after `timeoutMs`). */
export function runCli(args: string[], opts: { env: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number }): Promise<CliResult> {
  const child = startCli(args, opts);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
  return new Promise((resolveRun, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolveRun({ code, signal, stdout, stderr });
    });
  });
}
