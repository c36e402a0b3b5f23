import { readFileSync } from 'node:fs';

function read(): { version: string } {
  // dist/core/version.js and core/version.ts both sit two levels below package.json or one.
  for (const rel of ['../../package.json', '../package.json']) {
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
