import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** What `activate` stores for later commands and SDKs: one gateway, one key. */
export interface Credentials {
  url: string;
  api_key: string;
  account_id: string;
  project_id: string;
}

/** `$XDG_CONFIG_HOME/svc-gateway/credentials.json`, `~/.config/svc-gateway/credentials.json` without it. */
export function credentialsPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME?.startsWith('/') ? env.XDG_CONFIG_HOME : join(env.HOME || homedir(), '.config');
  return join(base, 'svc-gateway', 'credentials.json');
}

export function readCredentials(file: string): Credentials | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const c = JSON.parse(text) as Partial<Credentials>;
    return typeof c.url === 'string' && typeof c.api_key === 'string' ? (c as Credentials) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Write the file readable by its owner only (0600) in a directory only the owner can enter
 * (0700). The key goes to a new file created with that mode and is renamed over the old one,
 * so there is never a moment where it sits in a file with looser rights or half written.
 */
export function writeCredentials(file: string, creds: Credentials): void {
  const dir = join(file, '..');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, `${JSON.stringify(creds, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
    chmodSync(tmp, 0o600);
    renameSync(tmp, file);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}
