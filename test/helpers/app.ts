import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../config/load.js';
import { buildApp } from '../../core/app.js';
import type { CoreConfig } from '../../config/schema.js';
import type { Tap } from './tap.js';

/**
 * The suite runs on SQLite by default and on PostgreSQL when SVC_TEST_DATABASE_URL is set
 * (`npm run test:pg`); each app gets its own SQLite file or PostgreSQL schema, dropped after.
 */
export const PG_URL = process.env.SVC_TEST_DATABASE_URL;
export const DIALECT = PG_URL ? 'postgres' : 'sqlite';
/**
 * `skip` for tests of several nodes on one database: on SQLite one gateway owns the file
 * (core/sqlite/owner-lock.ts), so they run with SVC_TEST_DATABASE_URL only.
 */
export const ONE_NODE_ONLY = PG_URL
  ? false
  : 'several nodes on one database need PostgreSQL (one gateway owns a SQLite file)';

function merge(a: any, b: any): any {
  if (!b || typeof b !== 'object' || Array.isArray(b)) return b === undefined ? a : b;
  const out = { ...(a ?? {}) };
  for (const [k, v] of Object.entries(b)) out[k] = merge(out[k], v);
  return out;
}

export async function freshDatabaseUrl(t: Tap, dir: string): Promise<string> {
  if (!PG_URL) return `sqlite:${join(dir, 'gateway.db')}`;
  const schema = `t_${randomBytes(6).toString('hex')}`;
  t.teardown(async () => {
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    await c.query(`drop schema if exists ${schema} cascade`);
    await c.end();
  });
  return `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schema}`;
}

export interface TestApp {
  app: FastifyInstance;
  config: CoreConfig;
  dir: string;
}

/** A gateway on a temp data dir and a fresh database, closed and removed at teardown. */
export async function makeApp(
  t: Tap,
  overrides: Record<string, unknown> = {},
  opts: { baseDir?: string } = {}
): Promise<TestApp> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-test-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const url = await freshDatabaseUrl(t, dir);
  const base = {
    data_dir: dir,
    database: { url },
    log: { level: process.env.SVC_TEST_LOG ?? 'silent' },
    // Tests call loopback fakes (allow_private); allow_loopback is off so that a test turning
    // allow_private off sees the server's rules, not the laptop default (test/core/egress/loopback.test.ts).
    egress: { allow_private: true, allow_loopback: false },
    // Generous by default so tests that make many calls are not rate limited; the
    // rate-limit tests set their own tiers.
    tiers: {
      free: { rate_per_minute: 1_000_000, burst: 100_000, price_usd: 0 },
      pro: { rate_per_minute: 1_000_000, burst: 100_000, price_usd: 20 },
    },
    limits: { activate_per_hour: 100_000 },
  };
  const config = loadConfig({ object: merge(base, overrides), env: {} });
  const app = await buildApp(config, { baseDir: opts.baseDir });
  t.teardown(() => app.close());
  await app.ready();
  return { app, config, dir };
}

export interface Activated {
  key: string;
  account_id: string;
  project_id: string;
  auth: { authorization: string };
}

export async function activate(app: FastifyInstance, body: Record<string, unknown> = {}): Promise<Activated> {
  const res = await app.inject({ method: 'POST', url: '/v1/activate', payload: body });
  if (res.statusCode !== 200) throw new Error(`activate failed: ${res.statusCode} ${res.body}`);
  const r = res.json();
  return {
    key: r.primary_api_key,
    account_id: r.account_id,
    project_id: r.project_id,
    auth: { authorization: `Bearer ${r.primary_api_key}` },
  };
}
