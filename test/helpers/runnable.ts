import { realpathSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

// `npm test` runs the tests compiled to JavaScript in .test-build/ (scripts/test-build.mjs),
// `npx tap test/x.test.ts` from the TypeScript sources through tsx. A file a test hands to
// another process or loads by path must be the one that runs there: the .js beside it when
// compiled, else the .ts (tsx then travels in process.execArgv).

/** `rel` (a .ts path, as in the sources) from the module at `from` (its import.meta.url), as Node can start it. */
export function runnable(rel: string, from: string): string {
  return fileURLToPath(new URL(from.endsWith('.js') ? rel.replace(/\.ts$/, '.js') : rel, from));
}

/** The repository itself, from the sources or from .test-build/ (where package.json is a link). */
export const REPO = dirname(realpathSync(fileURLToPath(new URL('../../package.json', import.meta.url))));
