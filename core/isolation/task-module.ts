import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// Where a worker's task module is. A URL relative to the caller's `import.meta.url` is right in
// dist/ and in the sources, but not in the bundled CLI: there the caller's code sits in
// dist/bin/chunks/, and the task module (never bundled: it runs in its own thread) stays where tsc
// wrote it, under dist/. So the module is named by its path from the tree's root
// (`vendors/pdf-lib/tasks`) and found by walking up from the caller: from vendors/pdf-lib/*.ts the
// root is the repository (the `.ts`, under tsx), from dist/vendors/... or dist/bin/chunks/... it
// is dist/, from the tests' compiled tree (.test-build/) it is .test-build/.

/** The module's file URL; throws naming what was looked for when there is none. */
export function findTaskModule(callerUrl: string, fromRoot: string): string {
  const caller = fileURLToPath(callerUrl);
  const ext = caller.endsWith('.ts') ? '.ts' : '.js';
  for (let dir = dirname(caller); ; dir = dirname(dir)) {
    const file = join(dir, `${fromRoot}${ext}`);
    if (existsSync(file)) return pathToFileURL(file).href;
    if (dirname(dir) === dir) break;
  }
  throw new Error(`The worker module ${fromRoot}${ext} was not found above ${caller}.`);
}

/** tsx's loader for a worker that loads TypeScript (the tests, run from the sources); else none. */
export function tsxLoaderFor(moduleUrl: string): string | undefined {
  return moduleUrl.endsWith('.ts') ? import.meta.resolve('tsx/esm/api') : undefined;
}
