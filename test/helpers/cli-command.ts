import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// How tests start the CLI as a process. From the TypeScript sources (tap's loader travels in
// process.execArgv) a start transpiles every module again, ~4 s of CPU each time; the build
// that `npm ci` makes (dist/) starts in ~1 s. So: dist/ when every source file's output is at
// least as new as the source, else the sources. SVC_TEST_FROM_SOURCE=1 forces the sources.

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const SOURCE_DIRS = ['core', 'config', 'plugins', 'vendors', 'bin', 'client'];

function* sources(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* sources(p);
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) yield p;
  }
}

function distIsFresh(): boolean {
  try {
    for (const d of SOURCE_DIRS) {
      for (const src of sources(join(ROOT, d))) {
        const out = join(ROOT, 'dist', src.slice(ROOT.length + 1).replace(/\.ts$/, '.js'));
        if (statSync(out).mtimeMs < statSync(src).mtimeMs) return false;
      }
    }
    return true;
  } catch {
    return false; // an output is missing: not built, or built before a file was added
  }
}

let args: string[] | undefined;

/** Node arguments that run the CLI (`[...cliCommand(), 'serve', …]`), absolute paths. */
export function cliCommand(): string[] {
  args ??= process.env.SVC_TEST_FROM_SOURCE !== '1' && distIsFresh()
    ? [join(ROOT, 'dist', 'bin', 'svc-gateway.js')]
    : [...process.execArgv, join(ROOT, 'bin', 'svc-gateway.ts')];
  return args;
}
