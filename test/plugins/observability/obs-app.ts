import type { FastifyInstance } from 'fastify';
import { activate, makeApp, type Activated } from '../../helpers/app.js';
import type { Tap } from '../../helpers/tap.js';

// A gateway for the observability tests, and two accounts (the second checks isolation).

export async function obsApp(t: Tap, overrides: Record<string, unknown> = {}) {
  const { app, dir, config } = await makeApp(t, overrides);
  const a = await activate(app);
  const b = await activate(app);
  return { app, a, b, dir, config };
}

export const post = (app: FastifyInstance, who: Activated, url: string, payload: unknown) =>
  app.inject({ method: 'POST', url, headers: who.auth, payload: payload as any });

export const get = (app: FastifyInstance, who: Activated, url: string) =>
  app.inject({ method: 'GET', url, headers: who.auth });

export const patch = (app: FastifyInstance, who: Activated, url: string, payload: unknown) =>
  app.inject({ method: 'PATCH', url, headers: who.auth, payload: payload as any });

export async function rowCount(app: FastifyInstance, table: string): Promise<number> {
  const r = await app.svc.db
    .selectFrom(table)
    .select((eb: any) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}
