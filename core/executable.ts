import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

// Finding a system binary an embedded engine drives (Chromium, ffmpeg).

/** Whether `path` exists and may be run by this process. */
export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first of `names` on PATH (or in /usr/bin when PATH is unset); undefined when none is. */
export function onPath(names: readonly string[], env: NodeJS.ProcessEnv = process.env): string | undefined {
  const dirs = (env.PATH ?? '/usr/bin').split(delimiter).filter(Boolean);
  for (const name of names) {
    for (const dir of dirs) {
      const path = join(dir, name);
      if (isExecutable(path)) return path;
    }
  }
  return undefined;
}
