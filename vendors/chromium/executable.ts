import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Names a Chromium or Chrome binary goes by on Linux distributions and Google's packages. */
const NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The browser to drive when the operator named none: CHROME_PATH first (the variable other
 * tools honour), then the usual names on PATH (or /usr/bin when PATH is unset). Undefined when
 * there is none: the gateway still boots, it just renders no PDF.
 */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.CHROME_PATH && executable(env.CHROME_PATH)) return env.CHROME_PATH;
  const dirs = (env.PATH ?? '/usr/bin').split(delimiter).filter(Boolean);
  for (const name of NAMES) {
    for (const dir of dirs) {
      const path = join(dir, name);
      if (executable(path)) return path;
    }
  }
  return undefined;
}

/** An operator-given path must exist: a typo is a boot error, not a silent "no PDF". */
export function checkChromium(path: string): string {
  if (!executable(path)) throw new Error(`executable_path ${path} does not exist or is not executable.`);
  return path;
}
