import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliCommand } from './cli-command.js';

export interface GatewayProcess {
  url: string;
  proc: ChildProcess;
  /** Resolves when the process has exited. */
  exited: Promise<number | null>;
  output(): string;
}

/**
 * The real gateway in its own process (`svc-gateway serve`, see cli-command.ts), on a config file written
 * into `dir`, listening on a free loopback port. Killed at teardown if still running.
 */
export async function startGateway(
  t: { teardown(fn: () => unknown): void },
  dir: string,
  config: Record<string, unknown>,
  name = 'gateway'
): Promise<GatewayProcess> {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, JSON.stringify({ server: { host: '127.0.0.1', port: 0 }, log: { level: 'warn' }, ...config }));
  const proc = spawn(process.execPath, [...cliCommand(), 'serve', '--config', file], {
    cwd: process.cwd(),
    env: { ...process.env, SVC_CONFIG: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (c) => (out += c));
  proc.stderr!.on('data', (c) => (out += c));
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  t.teardown(async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGKILL');
      await exited;
    }
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start in 60 s:\n${out}`)), 60_000);
    const check = () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        proc.stdout!.off('data', check);
        resolve(m[1]);
      }
    };
    proc.stdout!.on('data', check);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code} before listening:\n${out}`));
    });
  });
  return { url, proc, exited, output: () => out };
}
