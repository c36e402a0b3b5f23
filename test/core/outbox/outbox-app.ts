import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { activate, makeApp, type Activated } from '../../helpers/app.js';
import { until } from '../../helpers/wait.js';
import type { Tap } from '../../helpers/tap.js';

// A gateway with the tiny outbox area and its fake vendor (test/helpers/outbox-*.ts) loaded by path.

const HELPERS = fileURLToPath(new URL('../../helpers/', import.meta.url));
// By path, so the file that runs here: the compiled .js under `npm test`, the .ts through tsx (runnable.ts).
const EXT = import.meta.url.endsWith('.js') ? '.js' : '.ts';

export interface FakeVendor {
  id: string;
  idempotency_keys?: boolean;
  price_micros?: number;
}

export async function outboxApp(
  t: Tap,
  vendors: FakeVendor[] = [{ id: 'fake1' }],
  overrides: Record<string, any> = {}
) {
  const { app } = await (makeApp as any)(
    t,
    {
      jobs: { poll_ms: 20 },
      ...overrides,
      plugins: { [`./outbox-area${EXT}`]: {}, ...(overrides.plugins ?? {}) },
      vendors: vendors.map(({ id, ...config }) => ({ id, use: `./outbox-vendor${EXT}`, config })),
    },
    { baseDir: HELPERS }
  );
  const a = await activate(app);
  const b = await activate(app);
  return { app: app as FastifyInstance, a, b };
}

export const send = (app: FastifyInstance, who: Activated, body: Record<string, unknown>, headers = {}) =>
  app.inject({ method: 'POST', url: '/v1/outboxtest/send', headers: { ...who.auth, ...headers }, payload: body });

export const record = async (app: FastifyInstance, who: Activated, id: string) =>
  (await app.inject({ method: 'GET', url: `/v1/outboxtest/${id}`, headers: who.auth })).json();

export async function untilState(app: FastifyInstance, who: Activated, id: string, state: string) {
  await until(`${id} ${state}`, async () => (await record(app, who, id)).state === state);
  return record(app, who, id);
}

/** What a node that died between the vendor call and its outcome leaves: attempt 1 recorded at `at`, no outcome. */
export const leaveAttemptOpen = (trx: Kysely<any>, id: string, vendors: string[], at = Date.now()) =>
  trx
    .updateTable('outbox_records')
    .set({ attempts: 1, attempt_open: JSON.stringify({ n: 1, vendors, at }) })
    .where('record_id', '=', id)
    .execute();

export const count = async (app: FastifyInstance, table: string, where: [string, string][] = []) => {
  let q = app.svc.db.selectFrom(table).select((eb: any) => eb.fn.countAll().as('n'));
  for (const [k, v] of where) q = q.where(k as any, '=', v);
  return Number((await q.executeTakeFirstOrThrow()).n);
};
