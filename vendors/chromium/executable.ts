import { isExecutable, onPath } from '../../core/kit/vendor.js';

/** Names a Chromium or Chrome binary goes by on Linux distributions and Google's packages. */
const NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];

/**
 * The browser to drive when the operator named none: CHROME_PATH first (the variable other
 * tools honour), then the usual names on PATH (or /usr/bin when PATH is unset). Undefined when
 * there is none: the gateway still boots, it just renders no PDF.
 */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.CHROME_PATH && isExecutable(env.CHROME_PATH)) return env.CHROME_PATH;
  return onPath(NAMES, env);
}

/** An operator-given path must exist: a typo is a boot error, not a silent "no PDF". */
export function checkChromium(path: string): string {
  if (!isExecutable(path)) throw new Error(`executable_path ${path} does not exist or is not executable.`);
  return path;
}
