import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The library the local engine runs on. It is an optional dependency (package.json): its
 * install can fail where npm cannot run it (offline, it pins an older sharp whose install
 * downloads libvips when the operator's project has no override), and the gateway then
 * installs and runs without background removal rather than not at all.
 */
export const LIBRARY = '@imgly/background-removal-node';

type Resolve = (specifier: string) => string;
const metaResolve: Resolve = (s) => import.meta.resolve(s);

/** Whether the library resolves from the gateway's code (cheap: a lookup, not an import). */
export function libraryInstalled(resolve: Resolve = metaResolve): boolean {
  try {
    resolve(LIBRARY);
    return true;
  } catch {
    return false;
  }
}

/**
 * Where the library and its model files are, as absolute file URLs resolved from the gateway's
 * code. The library's own default looks for its model under `process.cwd()`, so it failed
 * whenever the gateway was started from any directory but the package root.
 */
export function libraryLocation(resolve: Resolve = metaResolve): { libraryUrl: string; publicPath: string } {
  const libraryUrl = resolve(LIBRARY);
  return { libraryUrl, publicPath: new URL('./', libraryUrl).href };
}

/**
 * Why the model `model` cannot be loaded from `publicPath` (its index or one of its chunks
 * missing: a partial install, a pruned image), or undefined when every file is there. A few
 * stats at boot, so a missing model is "no engine" (503) and not a failure at each call.
 */
export function modelMissing(publicPath: string, model: string): string | undefined {
  const index = fileURLToPath(new URL('resources.json', publicPath));
  if (!existsSync(index)) return `its model index ${index} is missing`;
  let chunks: Array<{ hash: string }> | undefined;
  try {
    chunks = JSON.parse(readFileSync(index, 'utf8'))[`/models/${model}`]?.chunks;
  } catch (e) {
    return `its model index ${index} cannot be read (${(e as Error).message})`;
  }
  if (!chunks?.length) return `its model index ${index} has no model "${model}"`;
  const gone = chunks.find((c) => !existsSync(fileURLToPath(new URL(c.hash, publicPath))));
  return gone ? `a file of its "${model}" model (${gone.hash}) is missing` : undefined;
}
