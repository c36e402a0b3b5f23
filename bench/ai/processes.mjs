// The three servers of the AI bench, each its own process on 127.0.0.1: the OpenAI fake
// upstream, the gateway from dist with an `openai` vendor pointed at it, and the Portkey
// open-source gateway (`@portkey-ai/gateway`) told to proxy to the same fake.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { freePort, start, startGateway as startCoreGateway } from '../core/processes.mjs';

export const UPSTREAM_KEY = 'sk-bench';

/** Wait until a TCP port accepts a request (any status): for servers with no health route. */
async function waitListening(url, child, timeoutMs = 20_000) {
  const t0 = performance.now();
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`process exited with ${child.exitCode} before ${url} answered: ${child.stderrTail()}`);
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
  const child = start(process.execPath, [join(root, 'bench', 'ai', 'openai-fake.mjs')], {
    PORT: String(port),
    FAKE_KEY: UPSTREAM_KEY,
  });
  const base = `http://127.0.0.1:${port}`;
  await waitListening(`${base}/v1/models`, child);
  return { child, base };
}

/**
 * The gateway from dist (bench/core's: fresh data dir, SQLite, log level warn, a tier far above
 * what the machine can send) with trial credit that 64 connections of reservations never
 * exhaust, and one `openai` vendor instance on the fake.
 */
export function startGateway(root, fakeBase, nodeArgs = []) {
  return startCoreGateway(root, {
    nodeArgs,
    config: [
      'wallet: { trial_credit_usd: 100000 }',
      'vendors:',
      `  - { id: openai, use: openai, config: { api_key: ${UPSTREAM_KEY}, base_url: ${JSON.stringify(`${fakeBase}/v1`)} } }`,
    ],
  });
}

/** Portkey's gateway as its package ships it: `build/start-server.js --port=N --headless`. */
export async function startPortkey(root) {
  const require = createRequire(join(root, 'package.json'));
  const pkgDir = dirname(require.resolve('@portkey-ai/gateway/package.json'));
  const port = await freePort();
  const child = start(process.execPath, [join(pkgDir, 'build', 'start-server.js'), `--port=${port}`, '--headless'], {
    NODE_ENV: 'production',
  });
  const base = `http://127.0.0.1:${port}`;
  await waitListening(base, child);
  return { child, base };
}

/** The floor: a minimal Node.js proxy to the same fake (bench/ai/min-proxy.mjs). */
export async function startMinProxy(root, fakeBase) {
  const port = await freePort();
  const child = start(process.execPath, [join(root, 'bench', 'ai', 'min-proxy.mjs')], {
    PORT: String(port),
    UPSTREAM: fakeBase,
    UPSTREAM_KEY,
  });
  const base = `http://127.0.0.1:${port}`;
  await waitListening(base, child);
  return { child, base };
}
