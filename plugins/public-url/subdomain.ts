import { base62 } from '../../core/kit/area.js';

/** Names a tunnel may never take: they read as the service's own. */
const RESERVED = new Set(['www', 'api', 'app', 'admin', 'gateway', 'mail', 'status', 'dashboard', 'auth', 'login']);

/** A random name: 10 lower-case letters and digits (51 bits). */
export function randomSubdomain(): string {
  return base62(16)
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '')
    .slice(0, 10)
    .padEnd(10, '0');
}

export function reservedSubdomain(name: string, apiHost: string, tunnelDomain: string): boolean {
  if (RESERVED.has(name)) return true;
  // The API on a name under the tunnel domain (api.example.com beside *.example.com) keeps it.
  return apiHost === `${name}.${tunnelDomain}`;
}

/** A unique index refused the row: SQLite and PostgreSQL say so differently. */
export function isUniqueViolation(e: unknown): boolean {
  const err = e as { code?: string; message?: string };
  return err?.code === '23505' || /UNIQUE constraint failed/.test(err?.message ?? '');
}
