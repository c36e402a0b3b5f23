// Processes and receivers for the scheduling bench: the built gateway (dist) in its own
// process on a config file, and a loopback receiver that records what reaches it.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

const cleanups = [];
export function cleanup() {
  for (const fn of cleanups.splice(0).reverse()) {
    try {
      fn();
    } catch {
      /* best effort on the way out */
    }
  }
}

export function tempDir() {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A fresh schema in the bench's PostgreSQL, dropped at the end. */
export async function freshSchema(pgUrl, prefix) {
  const schema = `${prefix}_${Math.random().toString(36).slice(2, 10)}`;
  const c = new pg.Client({ connectionString: pgUrl });
  await c.connect();
  await c.query(`create schema ${schema}`);
  await c.end();
  return {
    schema,
    url: `${pgUrl}${pgUrl.includes('?') ? '&' : '?'}schema=${schema}`,
    async drop() {
      const d = new pg.Client({ connectionString: pgUrl });
      await d.connect();
      await d.query(`drop schema if exists ${schema} cascade`);
      await d.end();
    },
  };
}

export async function startGateway(root, dir, config, name = 'gateway') {
  const file = join(dir, `${name}.json`);
  writeFileSync(
    file,
    JSON.stringify({ server: { host: '127.0.0.1', port: 0 }, log: { level: 'warn' }, data_dir: dir, ...config })
  );
  // BENCH_NODE_ARGS passes flags to the gateway processes (`--cpu-prof` to profile them).
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(
    process.execPath,
    [...nodeArgs, join(root, 'dist', 'bin', 'svc-gateway.js'), 'serve', '--config', file],
    { cwd: root, env: { ...process.env, SVC_CONFIG: '' }, stdio: ['ignore', 'pipe', 'pipe'] }
  );
  cleanups.push(() => child.exitCode === null && child.kill('SIGKILL'));
  let out = '';
  child.stderr.on('data', (c) => (out += c));
  const base = await new Promise((resolve, reject) => {
    child.stdout.on('data', (c) => {
      out += c;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}:\n${out}`)));
  });
  const exited = new Promise((r) => child.once('exit', r));
  return { base, child, exited, output: () => out };
}

export async function activate(base) {
  const res = await fetch(`${base}/v1/activate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  if (res.status !== 200) throw new Error(`activate: ${res.status} ${await res.text()}`);
  return (await res.json()).primary_api_key;
}

export function api(base, key) {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  return {
    async post(path, body) {
      const res = await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`POST ${path}: ${res.status} ${text}`);
      return JSON.parse(text);
    },
    async patch(path, body) {
      const res = await fetch(`${base}${path}`, { method: 'PATCH', headers, body: JSON.stringify(body) });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`PATCH ${path}: ${res.status} ${text}`);
      return JSON.parse(text);
    },
    async get(path) {
      const res = await fetch(`${base}${path}`, { headers });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${text}`);
      return JSON.parse(text);
    },
  };
}

/** Run `fn(i)` for i in [0, n) with `width` at a time. */
export async function pool(n, width, fn) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await fn(next++);
    })
  );
}

/**
 * A loopback receiver. `hold()` keeps every request waiting until `release()`; `onHit` sees
 * each request's path, headers and arrival time.
 */
export async function receiver(onHit = () => {}) {
  let holding = false;
  const held = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      onHit({ url: req.url, headers: req.headers, at: Date.now(), body: Buffer.concat(chunks) });
      const answer = () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      if (holding) held.push(answer);
      else answer();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => {
    server.closeAllConnections();
    server.close();
  });
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    hold() {
      holding = true;
    },
    release() {
      holding = false;
      for (const a of held.splice(0)) a();
    },
  };
}

export async function until(what, cond, ms) {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
