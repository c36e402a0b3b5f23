// Starting, probing and stopping the processes a bench measures. Every child is tracked
// so that an error, a timeout or an interrupt still kills it.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const children = new Set();
const tempDirs = new Set();

export function cleanup() {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  children.clear();
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
  tempDirs.clear();
}
process.on('exit', cleanup);
for (const sig of ['SIGINT', 'SIGTERM'])
  process.on(sig, () => {
    cleanup();
    process.exit(130);
  });

export function tempDir(prefix) {
  const d = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.add(d);
  return d;
}

/** A port nobody listens on right now (loopback only). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

export function start(cmd, args, env) {
  const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let err = '';
  child.stderr.on('data', (d) => {
    err = (err + d).slice(-4000);
  });
  child.stdout.resume();
  child.stderrTail = () => err;
  child.once('exit', () => children.delete(child));
  return child;
}

/** Stop a child with SIGTERM (its graceful path), SIGKILL after 5 s; resolves when it is gone. */
export function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Poll `url` until it answers 200; resolves with the ms since `since`. */
export async function waitFor200(url, child, since, timeoutMs = 20_000) {
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`process exited with ${child.exitCode} before ${url} answered: ${child.stderrTail()}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (res.status === 200) return performance.now() - since;
    } catch {
      /* not listening yet */
    }
    if (performance.now() - since > timeoutMs) throw new Error(`${url} gave no 200 within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * A gateway from dist on a fresh temp data dir with SQLite, log level warn, and a tier whose
 * rate limit is far above what one machine can send, set through a temp config file;
 * `opts.config` adds lines to that file, `opts.nodeArgs` flags to node.
 */
export async function startGateway(root, opts = {}) {
  const dir = tempDir('svc-bench-');
  const port = await freePort();
  const file = join(dir, 'svc.config.yaml');
  writeFileSync(
    file,
    [
      'version: 1',
      `data_dir: ${JSON.stringify(join(dir, 'data'))}`,
      'log: { level: warn }',
      'default_tier: bench',
      'tiers:',
      '  bench: { rate_per_minute: 600000000, burst: 10000000, price_usd: 0 }',
      ...(opts.config ?? []),
      '',
    ].join('\n')
  );
  const env = { SVC_CONFIG: file, SVC_PORT: String(port), SVC_HOST: '127.0.0.1' };
  for (const k of [
    'SVC_DATABASE_URL',
    'SVC_DATA_DIR',
    'SVC_LOG_LEVEL',
    'SVC_PUBLIC_URL',
    'SVC_REDIS_URL',
    'SVC_ADMIN_KEY',
    'SVC_MASTER_KEY',
  ])
    env[k] = '';
  const t0 = performance.now();
  const bin = join(root, 'dist', 'bin', 'svc-gateway.js');
  const child = start(process.execPath, [...binNodeFlags(bin), ...(opts.nodeArgs ?? []), bin], env);
  const base = `http://127.0.0.1:${port}`;
  const readyMs = await waitFor200(`${base}/readyz`, child, t0);
  return { child, base, readyMs };
}

/** The bare Fastify anchor, started and probed the way `startGateway` starts the gateway. */
export async function startBare(root) {
  const port = await freePort();
  const t0 = performance.now();
  const child = start(process.execPath, [join(root, 'bench', 'core', 'bare-server.mjs')], { PORT: String(port) });
  const base = `http://127.0.0.1:${port}`;
  const readyMs = await waitFor200(`${base}/v1/account/balance`, child, t0);
  return { child, base, readyMs };
}

/**
 * The node flags of the CLI's shebang (`#!/usr/bin/env -S node --max-semi-space-size=8 …`):
 * `npx svc-gateway` runs with them, so the bench does too.
 */
export function binNodeFlags(bin) {
  const first = readFileSync(bin, 'utf8').split('\n', 1)[0];
  const m = /^#!\/usr\/bin\/env -S node(.*)$/.exec(first);
  return m ? m[1].trim().split(/\s+/).filter(Boolean) : [];
}

/** POST /v1/activate and return the key. */
export async function activate(base) {
  const res = await fetch(`${base}/v1/activate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  if (res.status !== 200) throw new Error(`activate answered ${res.status}: ${await res.text()}`);
  return (await res.json()).primary_api_key;
}

/** CPU seconds (user + system) a process has used, from /proc/PID/stat (clock ticks of 10 ms). */
export function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Resident set size in bytes, from /proc/PID/status. */
export function rssBytes(pid) {
  const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(m[1]) * 1024;
}
