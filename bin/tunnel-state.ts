import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** What `svc-gateway tunnel` remembers so that a restart gets the same URL back. */
export interface RememberedTunnel {
  url_id: string;
  connect_url: string;
  /** An anonymous record's token (it connects the record; kept 0600 like the credentials). */
  token?: string;
}

const keyOf = (gateway: string, port: number, subdomain?: string) => `${gateway} ${port} ${subdomain ?? ''}`;

/** `tunnels.json` beside credentials.json. */
export function tunnelStatePath(credentialsFile: string): string {
  return join(credentialsFile, '..', 'tunnels.json');
}

function readAll(file: string): Record<string, RememberedTunnel> {
  try {
    const all = JSON.parse(readFileSync(file, 'utf8'));
    return all && typeof all === 'object' ? all : {};
  } catch {
    return {};
  }
}

export function recall(file: string, gateway: string, port: number, subdomain?: string): RememberedTunnel | undefined {
  return readAll(file)[keyOf(gateway, port, subdomain)];
}

export function remember(
  file: string,
  gateway: string,
  port: number,
  subdomain: string | undefined,
  t: RememberedTunnel
) {
  const all = { ...readAll(file), [keyOf(gateway, port, subdomain)]: t };
  const dir = join(file, '..');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(all, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}
