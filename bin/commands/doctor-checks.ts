import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import { ConfigError } from '../../config/load.js';
import { buildApp } from '../../core/app.js';
import { createLogger } from '../../core/logger.js';
import { openDatabase } from '../../core/db/open.js';
import type { RegisteredInstance } from '../../core/router/registry.js';
import { configFromFlags, err, out } from './command.js';
import { migrationModules, pendingMigrations } from './migration-state.js';

type Status = 'ok' | 'warn' | 'skip' | 'FAIL';
interface Row {
  check: string;
  status: Status;
  detail: string;
}

/** Settle within `ms` whatever the callee does with its signal. */
async function within<T>(ms: number, what: string, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ac = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      ac.abort();
      reject(new Error(`${what} did not answer within ${ms} ms`));
    }, ms);
  });
  try {
    return await Promise.race([fn(ac.signal), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

function pendingRow(pending: string[], modules: Awaited<ReturnType<typeof migrationModules>>): Row {
  return pending.length
    ? {
        check: 'migrations',
        status: 'warn',
        detail: `${pending.length} pending: ${pending.join(', ')} (serve or migrate applies them)`,
      }
    : { check: 'migrations', status: 'ok', detail: `up to date (${modules.map((m) => m.name).join(', ')})` };
}

async function databaseRows(
  url: string,
  modules: Awaited<ReturnType<typeof migrationModules>>,
  timeoutMs: number
): Promise<Row[]> {
  const shown = url.replace(/\/\/[^@/]*@/, '//***@');
  const file = url.startsWith('sqlite:') ? url.slice('sqlite:'.length) : undefined;
  if (file && file !== ':memory:' && !existsSync(file)) {
    // Opening it would create it; serve or migrate will.
    return [
      { check: 'database', status: 'warn', detail: `sqlite ${file} does not exist yet (serve or migrate creates it)` },
      pendingRow(
        modules.flatMap((m) =>
          Object.keys(m.migrations)
            .sort()
            .map((n) => `${m.name}/${n}`)
        ),
        modules
      ),
    ];
  }
  let database: Awaited<ReturnType<typeof openDatabase>> | undefined;
  try {
    database = await within(timeoutMs, 'the database', () => openDatabase(url, { poolSize: 1 }));
    const db = database.db;
    await within(timeoutMs, 'the database', () => sql`select 1`.execute(db));
    const rows: Row[] = [{ check: 'database', status: 'ok', detail: `${database.dialect} ${shown}` }];
    const pending: string[] = [];
    for (const m of modules) pending.push(...(await pendingMigrations(db, m)).map((n) => `${m.name}/${n}`));
    rows.push(pendingRow(pending, modules));
    return rows;
  } catch (e) {
    return [
      { check: 'database', status: 'FAIL', detail: `${shown}: ${(e as Error).message}` },
      { check: 'migrations', status: 'skip', detail: 'no database' },
    ];
  } finally {
    // A pool that never connected may never close either: do not wait for it.
    if (database) await within(timeoutMs, 'closing the database', () => database!.close()).catch(() => undefined);
  }
}

async function vendorRow(v: RegisteredInstance, timeoutMs: number): Promise<Row> {
  const check = `vendor ${v.id}`;
  const what = `${v.adapter}; ${Object.keys(v.instance.capabilities).join(', ') || 'no capabilities'}`;
  if (v.byokOnly)
    return { check, status: 'skip', detail: `${what}; BYOK only: serves callers who register their own key` };
  if (!v.instance.health) return { check, status: 'skip', detail: `${what}; no health check` };
  const started = Date.now();
  try {
    const r = await within(timeoutMs, 'the health check', (signal) => v.instance.health!({ signal }));
    // A vendor's errors name it (`ollama: cannot connect`) for the router's details; the row
    // already does, so the name is said once.
    const error = (r.error ?? 'unhealthy').replace(new RegExp(`^${escapeRegExp(v.id)}: `), '');
    return r.ok
      ? { check, status: 'ok', detail: `${what}; ${Date.now() - started} ms` }
      : { check, status: 'FAIL', detail: `${what}; ${error}` };
  } catch (e) {
    return { check, status: 'FAIL', detail: `${what}; ${(e as Error).message}` };
  }
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Capabilities no vendor can serve right now, from GET /v1/discovery (the operations' own
 * `reason`, the words of their 503), one row per way to enable them: a gateway with every AI
 * capability off is not "fine" for someone who wants AI.
 */
async function unavailableRows(app: FastifyInstance): Promise<Row[]> {
  const res = await app.inject({ method: 'GET', url: '/v1/discovery' });
  const items = res.json().items as { capability: string | null; available: boolean; reason?: string }[];
  const byHow = new Map<string, Set<string>>();
  for (const i of items) {
    if (i.available || !i.capability) continue;
    // "No vendor is configured for ai.chat. Add one under `vendors:`…": the advice, without the name.
    const how = (i.reason ?? '').replace(
      /^No vendor is configured for \S+?(?: with [^.]*)?\. /,
      'no vendor configured. '
    );
    byHow.set(how, (byHow.get(how) ?? new Set()).add(i.capability));
  }
  return [...byHow].map(([how, caps]) => ({
    check: 'unavailable',
    status: 'warn' as const,
    detail: `${[...caps].sort().join(', ')}: ${how}`,
  }));
}

/** The last line: failures and what is unavailable, else fine. */
function verdict(rows: Row[]): string {
  const failed = rows.filter((r) => r.status === 'FAIL').length;
  const off = rows
    .filter((r) => r.check === 'unavailable')
    .reduce((n, r) => n + r.detail.slice(0, r.detail.indexOf(': ')).split(', ').length, 0);
  const unavailable = `${off} capabilit${off === 1 ? 'y is' : 'ies are'} unavailable (the "unavailable" rows say how to enable them): their operations answer 503 no_vendor_available.`;
  if (failed) return `${failed} check${failed === 1 ? '' : 's'} failed.${off ? ` ${unavailable}` : ''}`;
  return off ? `No check failed, but ${unavailable}` : 'Everything checked is fine.';
}

function table(rows: Row[]): string {
  const w1 = Math.max(5, ...rows.map((r) => r.check.length));
  const line = (a: string, b: string, c: string) => `${a.padEnd(w1)}  ${b.padEnd(6)}  ${c}`.trimEnd();
  return [line('CHECK', 'STATUS', 'DETAIL'), ...rows.map((r) => line(r.check, r.status, r.detail))].join('\n');
}

/**
 * Check the config, the database and every vendor instance; print the table. Resolves to the
 * exit code: 0 all passed, 1 a check failed, 2 the config is wrong.
 */
export async function doctor(flags: { config?: unknown }, timeoutMs: number): Promise<number> {
  let app: FastifyInstance | undefined;
  const rows: Row[] = [];
  try {
    // The real config and data dir, but an in-memory database and a throwaway master key,
    // so building the app to reach its vendors neither migrates nor writes anything.
    const real = await configFromFlags(flags);
    const probe = await configFromFlags(flags, {
      ...process.env,
      SVC_DATABASE_URL: 'sqlite::memory:',
      SVC_MASTER_KEY: randomBytes(16).toString('hex'),
    });
    const modules = await migrationModules(real.config, real.baseDir);
    app = await buildApp(probe.config, { baseDir: probe.baseDir, logger: createLogger('silent') });
    rows.push({ check: 'config', status: 'ok', detail: real.file ? real.file : 'no file: embedded defaults' });
    rows.push(...(await databaseRows(real.config.database.url, modules, timeoutMs)));
    for (const v of app.svc.vendors.all()) rows.push(await vendorRow(v, timeoutMs));
    rows.push(...(await unavailableRows(app)));
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    out(table([{ check: 'config', status: 'FAIL', detail: 'see below' }]));
    err(e.message.replace(/^invalid configuration:\n/, ''));
    return 2;
  } finally {
    await app?.close();
  }
  out(table(rows));
  out(`\n${verdict(rows)}`);
  return rows.some((r) => r.status === 'FAIL') ? 1 : 0;
}
