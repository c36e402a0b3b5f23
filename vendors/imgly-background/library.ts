/**
 * The library the local engine runs on. It is an optional dependency (package.json): its
 * install can fail where npm cannot run it (offline, it pins an older sharp whose install
 * downloads libvips when the operator's project has no override), and the gateway then
 * installs and runs without background removal rather than not at all.
 */
export const LIBRARY = '@imgly/background-removal-node';

/** Whether the library resolves from the gateway's code (cheap: a lookup, not an import). */
export function libraryInstalled(resolve: (specifier: string) => string = (s) => import.meta.resolve(s)): boolean {
  try {
    resolve(LIBRARY);
    return true;
  } catch {
    return false;
  }
}
