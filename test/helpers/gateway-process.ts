import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
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
 * into `dir`, listening on a free loopback port. Killed at teardown if still running. A string config is
 * the file's YAML as it is (it sets the port and log level itself); `cli` runs another installation.
 */
export async function startGateway(
  t: { teardown(fn: () => unknown): void },
  dir: string,
  config: Record<string, unknown> | string,
  name = 'gateway',
  cli = cliCommand()
): Promise<GatewayProcess> {
  const file = join(dir, `${name}.yaml`);
  const base = { server: { host: '127.0.0.1', port: 0 }, log: { level: 'warn' } };
  writeFileSync(file, typeof config === 'string' ? config : JSON.stringify({ ...base, ...config }));
  const proc = spawn(process.execPath, [...cli, 'serve', '--config', file], {
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

/**
 * A gateway process on SQLite in a fresh temporary directory (removed at teardown), that may fetch
 * from loopback (the tests' file servers), and the JSON headers of an account activated on it.
 */
export async function gatewayWithAccount(
  t: { teardown(fn: () => unknown): void; comment(...m: unknown[]): void },
  prefix: string
): Promise<{ gw: GatewayProcess; headers: Record<string, string> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  t.comment(`the gateway runs ${cliCommand().at(-1)}`);
  const gw = await startGateway(t, dir, {
    data_dir: dir,
    database: { url: `sqlite:${join(dir, 'gateway.db')}` },
    egress: { allow_private: true },
  });
  const json = { 'content-type': 'application/json' };
  const act = await (await fetch(`${gw.url}/v1/activate`, { method: 'POST', headers: json, body: '{}' })).json();
  return { gw, headers: { ...json, authorization: `Bearer ${act.primary_api_key}` } };
}
