import type { FastifyInstance } from 'fastify';
import { activate, makeApp, type Activated } from '../../helpers/app.js';
import { until } from '../../helpers/wait.js';
import type { Tap } from '../../helpers/tap.js';

// A gateway for the SMS tests: the embedded sms-capture sink, or the twilio adapter against
// the fake when `vendors` names it, and two accounts.

export async function smsApp(t: Tap, overrides: Record<string, unknown> = {}) {
  const { app, dir } = await makeApp(t, { jobs: { poll_ms: 20 }, ...overrides });
  const a = await activate(app);
  const b = await activate(app);
  return { app, a, b, dir };
}

export const post = (app: FastifyInstance, who: Activated, url: string, payload: Record<string, unknown>) =>
  app.inject({ method: 'POST', url, headers: who.auth, payload });

export const get = async (app: FastifyInstance, who: Activated, url: string) =>
  app.inject({ method: 'GET', url, headers: who.auth });

export async function untilState(app: FastifyInstance, who: Activated, id: string, state: string) {
  let last: any;
  await until(`${id} ${state}`, async () => {
    last = (await get(app, who, `/v1/sms/${id}`)).json();
    return last.state === state;
  });
  return last;
}

export const balance = async (app: FastifyInstance, who: Activated) =>
  (await get(app, who, '/v1/account/balance')).json().balance_usd as number;

export const outboxCount = async (app: FastifyInstance) =>
  Number(
    (
      await app.svc.db
        .selectFrom('outbox_records')
        .select((eb: any) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n
  );
