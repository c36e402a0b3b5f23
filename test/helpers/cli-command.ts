import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { distIsFresh } from '../../scripts/build.mjs';
import { runnable } from './runnable.js';

// How tests start the CLI as a process. From the TypeScript sources (tap's loader travels in
// process.execArgv) a start transpiles every module again, ~4 s of CPU each time; the build
// that `npm ci` makes (dist/) starts in ~1 s. So: dist/ when every source file's output is at
// least as new as the source (the check `npm run build` makes), else the sources.
// SVC_TEST_FROM_SOURCE=1 forces the sources.

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));

let args: string[] | undefined;

/** Node arguments that run the CLI (`[...cliCommand(), 'serve', …]`), absolute paths. */
export function cliCommand(): string[] {
  args ??=
    process.env.SVC_TEST_FROM_SOURCE !== '1' && distIsFresh(ROOT)
      ? [join(ROOT, 'dist', 'bin', 'svc-gateway.js')]
      : [...process.execArgv, runnable('../../bin/svc-gateway.ts', import.meta.url)];
  return args;
}
