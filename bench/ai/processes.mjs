// The three servers of the AI bench, each its own process on 127.0.0.1: the OpenAI fake
// upstream, the gateway from dist with an `openai` vendor pointed at it, and the Portkey
// open-source gateway (`@portkey-ai/gateway`) told to proxy to the same fake.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { freePort, start, tempDir, waitFor200 } from '../core/processes.mjs';

export const UPSTREAM_KEY = 'sk-bench';

/** Wait until a TCP port accepts a request (any status): for servers with no health route. */
async function waitListening(url, child, timeoutMs = 20_000) {
  const t0 = performance.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`process exited with ${child.exitCode} before ${url} answered: ${child.stderrTail()}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      return;
    } catch {
      /* not listening yet */
    }
    if (performance.now() - t0 > timeoutMs) throw new Error(`${url} did not answer within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function startFake(root) {
  const port = await freePort();
  const child = start(process.execPath, [join(root, 'bench', 'ai', 'openai-fake.mjs')], { PORT: String(port), FAKE_KEY: UPSTREAM_KEY });
  const base = `http://127.0.0.1:${port}`;
  await waitListening(`${base}/v1/models`, child);
  return { child, base };
}

/**
 * The gateway from dist: fresh temp data dir, SQLite, log level warn, a tier far above what
 * the machine can send, trial credit that 64 connections of reservations never exhaust, and
 * one `openai` vendor instance on the fake.
 */
export async function startGateway(root, fakeBase, extraArgs = []) {
  const dir = tempDir('svc-bench-ai-');
  const port = await freePort();
  const file = join(dir, 'svc.config.yaml');
  writeFileSync(file, [
    'version: 1',
    `data_dir: ${JSON.stringify(join(dir, 'data'))}`,
    'log: { level: warn }',
    'default_tier: bench',
    'tiers:',
    '  bench: { rate_per_minute: 600000000, burst: 10000000, price_usd: 0 }',
    'wallet: { trial_credit_usd: 100000 }',
    'vendors:',
    `  - { id: openai, use: openai, config: { api_key: ${UPSTREAM_KEY}, base_url: ${JSON.stringify(`${fakeBase}/v1`)} } }`,
    '',
  ].join('\n'));
  const env = { SVC_CONFIG: file, SVC_PORT: String(port), SVC_HOST: '127.0.0.1' };
  for (const k of ['SVC_DATABASE_URL', 'SVC_DATA_DIR', 'SVC_LOG_LEVEL', 'SVC_PUBLIC_URL', 'SVC_REDIS_URL', 'SVC_ADMIN_KEY', 'SVC_MASTER_KEY']) env[k] = '';
  const child = start(process.execPath, [...extraArgs, join(root, 'dist', 'bin', 'svc-gateway.js')], env);
  const base = `http://127.0.0.1:${port}`;
  await waitFor200(`${base}/readyz`, child, performance.now());
  return { child, base };
}

/** Portkey's gateway as its package ships it: `build/start-server.js --port=N --headless`. */
export async function startPortkey(root) {
  const require = createRequire(join(root, 'package.json'));
  const pkgDir = dirname(require.resolve('@portkey-ai/gateway/package.json'));
  const port = await freePort();
  const child = start(process.execPath, [join(pkgDir, 'build', 'start-server.js'), `--port=${port}`, '--headless'], { NODE_ENV: 'production' });
  const base = `http://127.0.0.1:${port}`;
  await waitListening(base, child);
  return { child, base };
}
