import { createHash } from 'node:crypto';
import { readdir, stat, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';

// Large puts stream into `<bucket>/.tmp/<name>` before their rename; a process killed
// meanwhile leaves the file there for good. Several processes may share a data dir, so a
// store that opens removes only files whose writer is certainly gone: each name starts with
// its writer's host, process id and store instance, and a file is stale when its process is
// dead, or is this process and the store is closed. A file of another host (a shared disk)
// or of an unknown name (written before names said whose they were) is stale once nothing
// has written to it for a day, longer than any transfer runs.

const FOREIGN_GRACE_MS = 24 * 3_600_000;
const HOST = createHash('sha256').update(hostname()).digest('hex').slice(0, 8);
const NAME = /^([0-9a-f]{8})~(\d+)~([0-9a-f]{8})~/;

/** Store instances of this process that are open: their temp files are in use. */
const open = new Set<string>();

export function openInstance(instance: string): void {
  open.add(instance);
}

export function closeInstance(instance: string): void {
  open.delete(instance);
}

/** The name of a temp file of this store instance: whose it is, then `unique`. */
export function tempName(instance: string, unique: string): string {
  return `${HOST}~${process.pid}~${instance}~${unique}`;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as { code?: string }).code === 'EPERM'; // someone else's process, but alive
  }
}

async function stale(path: string, name: string, now: number): Promise<boolean> {
  const m = NAME.exec(name);
  if (m && m[1] === HOST) {
    const pid = Number(m[2]);
    return pid === process.pid ? !open.has(m[3]) : !alive(pid);
  }
  const st = await stat(path);
  return now - st.mtimeMs > FOREIGN_GRACE_MS;
}

async function entries(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw e;
  }
}

/** Remove the stale temp files under `root` (`<root>/<account>/<bucket>/.tmp/*`); how many. */
export async function sweepTempFiles(root: string, now = Date.now()): Promise<number> {
  let removed = 0;
  for (const account of await entries(root)) {
    for (const bucket of await entries(join(root, account))) {
      const tmp = join(root, account, bucket, '.tmp');
      for (const name of await entries(tmp)) {
        const path = join(tmp, name);
        try {
          if (!(await stale(path, name, now))) continue;
          await unlink(path);
          removed++;
        } catch (e) {
          if ((e as { code?: string }).code !== 'ENOENT') throw e; // gone already: renamed, or swept by another
        }
      }
    }
  }
  return removed;
}
