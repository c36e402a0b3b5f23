import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { PRIVATE_DIR, PRIVATE_FILE } from '../data-dir.js';

/**
 * The master key encrypts BYOK secrets and signs tokens. From the config when set (every
 * node of a cluster must share it); otherwise generated once into the data dir, mode 0600.
 */
export function loadMasterKey(configured: string, dataDir: string): Buffer {
  if (configured) return createHash('sha256').update(configured).digest();
  const file = join(dataDir, 'master.key');
  if (existsSync(file)) return Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  mkdirSync(dataDir, { recursive: true, mode: PRIVATE_DIR });
  const key = randomBytes(32);
  try {
    writeFileSync(file, `${key.toString('base64')}\n`, { mode: PRIVATE_FILE, flag: 'wx' });
  } catch (e) {
    // Another process (a second node on the same data dir, `migrate`) wrote it first: use theirs.
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
    throw e;
  }
  return key;
}
