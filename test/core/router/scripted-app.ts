import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { makeApp, type TestApp } from '../../helpers/app.js';

// Apps that load the third-party fixtures (svc-area-meter, svc-vendor-scripted) from
// test/fixtures/plugin-project the way an operator's `npm install` would leave them.

export const PLUGIN_PROJECT = fileURLToPath(new URL('../../fixtures/plugin-project/', import.meta.url));

export type Behaviour = string | { mode: string; delay_ms?: number; retry_after_s?: number };

export interface Script {
  mode: Behaviour;
  once: Behaviour[];
  calls: { capability: string; input: { input: string; model?: string }; at: number; mode: string }[];
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

type Tap = Parameters<typeof makeApp>[0];

export async function scriptedApp(t: Tap, vendors: ScriptedVendor[], overrides: Record<string, unknown> = {}): Promise<TestApp> {
  return makeApp(t, {
    plugins: { 'svc-area-meter': {} },
    vendors: vendors.map(({ id, regions, ...config }) => ({ id, use: 'svc-vendor-scripted', config, ...(regions ? { regions } : {}) })),
    ...overrides,
  }, { baseDir: PLUGIN_PROJECT });
}

export function meterCall(app: FastifyInstance, auth: Record<string, string>, body: Record<string, unknown>, what: 'run' | 'send' = 'run') {
  return app.inject({ method: 'POST', url: `/v1/meter/${what}`, headers: auth, payload: body });
}
