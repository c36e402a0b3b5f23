import type { FastifyInstance } from 'fastify';
import { activate, makeApp, type Activated } from '../../helpers/app.js';
import type { Tap } from '../../helpers/tap.js';

// A gateway for the analytics tests, with two accounts.

export async function analyticsApp(t: Tap, analytics: Record<string, unknown> = {}) {
  const { app, dir } = await makeApp(t, { plugins: { analytics } });
  const a = await activate(app);
  const b = await activate(app);
  return { app, a, b, dir };
}

export const post = (app: FastifyInstance, who: Activated, url: string, payload: unknown) =>
  app.inject({ method: 'POST', url, headers: who.auth, payload: payload as any });

export const get = (app: FastifyInstance, who: Activated, url: string) =>
  app.inject({ method: 'GET', url, headers: who.auth });

/** Events stored for an account. */
export async function eventCount(app: FastifyInstance, accountId: string): Promise<number> {
  const r = await app.svc.db
    .selectFrom('analytics_events')
    .select((eb: any) => eb.fn.countAll().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}
