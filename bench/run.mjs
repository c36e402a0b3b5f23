#!/usr/bin/env node
// `npm run bench -- NAME`: build dist when it is missing or older than the sources, run
// bench/NAME/index.mjs, and exit 0 only when every `target …` line it prints ends in `ok`.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const SOURCE_DIRS = ['core', 'config', 'plugins', 'vendors', 'bin', 'client'];
const TARGET = /^target (\S+): (.+) → (\S+) \(goal ([^)]+)\) (ok|short)$/;

function newestMtime(path) {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return path.endsWith('.ts') || path.endsWith('.json') ? st.mtimeMs : 0;
  let newest = 0;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

/** dist is stale when a source file (or the compiler config) changed after the last build. */
function ensureBuilt() {
  const built = join(root, 'dist', 'bin', 'svc-gateway.js');
  const sources = Math.max(
    ...SOURCE_DIRS.map((d) => newestMtime(join(root, d))),
    newestMtime(join(root, 'tsconfig.json'))
  );
  if (existsSync(built) && statSync(built).mtimeMs >= sources) return;
  process.stdout.write('bench: building dist (npm run build: tsc, then the CLI bundled)\n');
  const r = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs'), '--force'], {
    cwd: root,
    stdio: 'inherit',
  });
  if (r.status !== 0) {
    process.stderr.write('bench: the build failed\n');
    process.exit(1);
  }
}

const name = process.argv[2];
const benches = readdirSync(join(root, 'bench'), { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(root, 'bench', d.name, 'index.mjs')))
  .map((d) => d.name);
if (!name || !benches.includes(name)) {
  process.stderr.write(`usage: npm run bench -- NAME   (one of: ${benches.join(', ') || 'none'})\n`);
  process.exit(2);
}
ensureBuilt();

const child = spawn(process.execPath, [join(root, 'bench', name, 'index.mjs'), ...process.argv.slice(3)], {
  cwd: root,
  stdio: ['ignore', 'pipe', 'inherit'],
});
const results = [];
let pending = '';
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  pending += chunk;
  const lines = pending.split('\n');
  pending = lines.pop();
  for (const line of lines) {
    const m = TARGET.exec(line.trim());
    if (m) results.push({ target: m[1], verdict: m[5] });
  }
});
// Pass an interrupt on, so the bench kills the servers it started.
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('close', (code) => {
  const m = TARGET.exec(pending.trim());
  if (m) results.push({ target: m[1], verdict: m[5] });
  const short = results.filter((r) => r.verdict !== 'ok');
  if (code !== 0) process.stderr.write(`bench ${name}: exited with ${code}\n`);
  else if (!results.length) process.stderr.write(`bench ${name}: printed no target lines\n`);
  else if (short.length) process.stderr.write(`bench ${name}: short on ${short.map((r) => r.target).join(', ')}\n`);
  process.exit(code === 0 && results.length && !short.length ? 0 : 1);
});
