import type { FastifyInstance } from 'fastify';
import { activate, makeApp, type Activated } from '../../helpers/app.js';
import type { Tap } from '../../helpers/tap.js';

/** A gateway with the billing area on the sandbox processor (its delayed methods settling after 60 s). */
export async function billingApp(t: Tap, overrides: Record<string, unknown> = {}) {
  const { app } = await makeApp(t, {
    vendors: [{ id: 'sandbox-payments', use: 'sandbox-payments', config: { settle_delay_seconds: 60 } }],
    ...overrides,
  });
  return { app, a: await activate(app), b: await activate(app) };
}

export const charge = (app: FastifyInstance, who: Activated, payload: Record<string, unknown>, headers = {}) =>
  app.inject({ method: 'POST', url: '/v1/billing/charges', headers: { ...who.auth, ...headers }, payload });

export const refund = (app: FastifyInstance, who: Activated, payload: Record<string, unknown>, headers = {}) =>
  app.inject({ method: 'POST', url: '/v1/billing/refunds', headers: { ...who.auth, ...headers }, payload });

export const getCharge = (app: FastifyInstance, who: Activated, id: string) =>
  app.inject({ method: 'GET', url: `/v1/billing/charges/${id}`, headers: who.auth });

export const count = async (app: FastifyInstance, table: 'billing_charges' | 'billing_refunds') =>
  Number(
    (
      await app.svc.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n
  );

/** A charge's stored state, read without a lookup at its vendor (which a GET would make). */
export const storedState = async (app: FastifyInstance, chargeId: string) =>
  (
    await app.svc.db
      .selectFrom('billing_charges')
      .select('state')
      .where('charge_id', '=', chargeId)
      .executeTakeFirstOrThrow()
  ).state;
