#!/usr/bin/env node
// `npm run build` and `prepare`: compile to dist/ unless dist/ is already up to date.
// `prepare` runs at `npm ci`, and again whenever npm installs this directory as a package:
// `npx svc-gateway` in a clone installs the clone into npx's cache on each first use, and a
// full tsc run (15-25 s of silence) there made the first start look hung. Skipping a build
// whose every output is newer than its source makes that run cost milliseconds.
// `--force` always compiles. Plain JavaScript: it runs before anything is built. After tsc, the
// CLI's entry is bundled (bundle-cli.mjs).
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
// tsconfig.json's "include".
const SOURCE_DIRS = ['core', 'config', 'plugins', 'vendors', 'bin', 'client'];

function* sources(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* sources(p);
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) yield p;
  }
}

/** Every source file's output in dist/ exists and is at least as new as the source. */
export function distIsFresh(root = ROOT) {
  try {
    for (const d of SOURCE_DIRS) {
      for (const src of sources(join(root, d))) {
        const out = join(root, 'dist', src.slice(root.length + 1).replace(/\.ts$/, '.js'));
        if (statSync(out).mtimeMs < statSync(src).mtimeMs) return false;
      }
    }
    return true;
  } catch {
    return false; // an output is missing: not built, or built before a file was added
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (!process.argv.includes('--force') && distIsFresh()) {
    process.stderr.write(
      'svc-gateway: dist/ is up to date, nothing to compile (npm run build -- --force to rebuild)\n'
    );
  } else {
    process.stderr.write('svc-gateway: compiling TypeScript to dist/ (about 20 s)...\n');
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const r = spawnSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.json')], { stdio: 'inherit' });
    process.exitCode = r.status ?? 1;
    if (r.status === 0) {
      const { bundleCli } = await import('./bundle-cli.mjs');
      await bundleCli(ROOT);
    }
  }
}
