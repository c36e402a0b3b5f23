import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { makeApp, type TestApp } from './app.js';
import type { Tap } from './tap.js';

// Apps that load the third-party fixtures (svc-area-meter, svc-vendor-scripted) from
// test/fixtures/plugin-project the way an operator's `npm install` would leave them.

export const PLUGIN_PROJECT = fileURLToPath(new URL('../fixtures/plugin-project/', import.meta.url));

export type Behaviour = string | { mode: string; delay_ms?: number; retry_after_s?: number };

export interface Script {
  mode: Behaviour;
  once: Behaviour[];
  // deadline: the epoch ms the router gave the call to answer by.
  calls: { capability: string; input: { input: string; model?: string }; at: number; mode: string; deadline: number }[];
}

/** The live script of a configured svc-vendor-scripted instance. */
export function script(id: string): Script {
  const s = (globalThis as { __svcScripted?: Map<string, Script> }).__svcScripted?.get(id);
  if (!s) throw new Error(`no svc-vendor-scripted instance "${id}" is running`);
  return s;
}

export interface ScriptedVendor {
  id: string;
  price_micros?: number;
  models?: string[];
  regions?: string[];
  capabilities?: string[];
}

export async function scriptedApp(
  t: Tap,
  vendors: ScriptedVendor[],
  overrides: Record<string, unknown> = {}
): Promise<TestApp> {
  return makeApp(
    t,
    {
      plugins: { 'svc-area-meter': {} },
      vendors: vendors.map(({ id, regions, ...config }) => ({
        id,
        use: 'svc-vendor-scripted',
        config,
        ...(regions ? { regions } : {}),
      })),
      ...overrides,
    },
    { baseDir: PLUGIN_PROJECT }
  );
}

export function meterCall(
  app: FastifyInstance,
  auth: Record<string, string>,
  body: Record<string, unknown>,
  what: 'run' | 'send' = 'run'
) {
  return app.inject({ method: 'POST', url: `/v1/meter/${what}`, headers: auth, payload: body });
}

/** The account's balance in micro-USD, its usage ledger entries and the holds still open. */
export async function money(app: FastifyInstance, accountId: string) {
  const db = app.svc.db;
  const balance = await app.svc.wallet.balance(accountId);
  const usage = (
    await db
      .selectFrom('wallet_ledger')
      .select(['amount_micros', 'vendor', 'capability'])
      .where('account_id', '=', accountId)
      .where('kind', '=', 'usage')
      .execute()
  ).map((r) => ({ amount_micros: Number(r.amount_micros), vendor: r.vendor, capability: r.capability }));
  const holds = await db.selectFrom('wallet_holds').select('hold_id').where('account_id', '=', accountId).execute();
  // On SQLite the holds of calls are kept in the gateway's memory (core/wallet/memory-holds.ts).
  return { balance, usage, holds: holds.length + app.svc.wallet.holdsInMemory(accountId) };
}

/** Attempts without their timings, for exact comparison. */
export function attemptsOf(body: { metadata?: { attempts: unknown[] }; error?: { details: { attempts: unknown[] } } }) {
  const list = (body.metadata?.attempts ?? body.error?.details.attempts ?? []) as { vendor: string; status: string }[];
  return list.map((a) => `${a.vendor}:${a.status}`);
}
