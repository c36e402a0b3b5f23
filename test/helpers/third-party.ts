import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { distIsFresh } from '../../scripts/build.mjs';
import { until } from './wait.js';
import { REPO } from './runnable.js';
import type { Tap } from './tap.js';

// Third-party vendor packages (test/fixtures/packages/<name>) installed the way an operator's
// `npm install svc-gateway <name>` leaves them: a project whose node_modules holds a copy of
// the package and svc-gateway itself (this checkout). The package imports `svc-gateway/define`
// and `svc-gateway/capabilities` by name, which the package's `exports` map to dist/: the
// compiled gateway, not the sources the test runs. So dist/ is built first when it is stale.

// The real checkout, not .test-build/ (whose files are links): the packages are copied from it.
const ROOT = REPO;
const PACKAGES = join(ROOT, 'test', 'fixtures', 'packages');
const LOCK = join(tmpdir(), `svc-dist-build-${createHash('sha256').update(ROOT).digest('hex').slice(0, 12)}`);

/** dist/ as fresh as the sources: compiled here when not, one test file at a time. */
async function freshDist(): Promise<void> {
  if (distIsFresh(ROOT)) return;
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch {
      // Another test file is compiling: wait for it rather than write dist/ under its feet.
      await until('another test file to finish compiling dist/', () => !existsSync(LOCK), 180_000);
    }
  }
  try {
    if (distIsFresh(ROOT)) return;
    const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { stdio: 'inherit' });
    if (r.status !== 0 || !distIsFresh(ROOT)) {
      throw new Error('dist/ could not be built (npm run build): the fixture packages import svc-gateway from it');
    }
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

/** An operator's project with the named fixture packages installed: the `baseDir` the config is read from. */
export async function thirdPartyProject(t: Tap, packages: string[]): Promise<string> {
  await freshDist();
  const dir = mkdtempSync(join(tmpdir(), 'svc-project-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(ROOT, join(dir, 'node_modules', 'svc-gateway'), 'dir');
  for (const name of packages) cpSync(join(PACKAGES, name), join(dir, 'node_modules', name), { recursive: true });
  return dir;
}
