import { readFileSync } from 'node:fs';

function read(): { version: string } {
  // core/version.ts sits one level below package.json, dist/core/version.js two, and the CLI's
  // bundled copy (dist/bin/chunks/) three.
  for (const rel of ['../../package.json', '../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8'));
      if (pkg.name === 'svc-gateway') return pkg;
    } catch {
      /* try the next */
    }
  }
  return { version: '0.0.0' };
}

export const VERSION = read().version;
