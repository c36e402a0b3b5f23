import { until as waitFor } from '../../../helpers/wait.js';
import { aiApp, MODELS } from '../setup.js';

// alpha (OpenAI fake) and beta (Anthropic fake) get batch prices at half their normal ones;
// gamma is served by an openai-compatible instance, which has no batch API.
export const BATCH_MODELS = [
  ...MODELS.map((m) =>
    m.id === 'alpha'
      ? { ...m, price: { ...m.price, batch_in: 500_000, batch_out: 1_000_000 } }
      : m.id === 'beta'
        ? { ...m, price: { ...m.price, batch_in: 1_000_000, batch_out: 2_000_000 } }
        : m
  ),
  {
    id: 'gamma',
    vendor: 'oc',
    family: 'gamma',
    tasks: ['general'],
    quality: 10,
    context_window: 8000,
    max_output: 1000,
    price: { in: 4_000_000, out: 8_000_000, batch_in: 2_000_000, batch_out: 4_000_000 },
    capabilities: ['chat'],
    regions: ['global'],
  },
];
export const FAST = { jobs: { poll_ms: 20 }, plugins: { ai: { models: BATCH_MODELS, batch_poll_ms: 15 } } };

export async function batchApp(t: Parameters<typeof aiApp>[0], overrides: Record<string, any> = FAST) {
  return aiApp(t, overrides);
}

export type Ctx = Awaited<ReturnType<typeof batchApp>>;

export const submit = (c: Ctx, payload: Record<string, unknown>, headers = c.auth) =>
  c.app.inject({ method: 'POST', url: '/v1/ai/chat', headers, payload: { ...payload, batch_mode: true } });

export async function until(c: Ctx, id: string, states: string[]): Promise<any> {
  let r: any;
  const get = async () =>
    (r = (await c.app.inject({ method: 'GET', url: `/v1/ai/batches/${id}`, headers: c.auth })).json());
  await waitFor(`batch ${id} to reach ${states.join('|')}`, async () => states.includes((await get()).state));
  return r;
}

export const holds = (c: Ctx) => c.app.svc.db.selectFrom('wallet_holds').selectAll().execute();

/** The row says succeeded a moment before the hold is settled: wait for the money to move too. */
export async function settled(c: Ctx): Promise<void> {
  await waitFor('the holds to be settled', async () => (await holds(c)).length === 0);
}

/**
 * Wait for `ok()`: a batch is final a moment before its vendor is asked to cancel. It fails
 * after until's 15 s, not a short count of polls, which a loaded machine outran.
 */
export async function eventually(ok: () => boolean | Promise<boolean>): Promise<void> {
  await waitFor('the condition', ok);
}

/**
 * Submit a batch and wait until it is out at its vendor and its first poll is enqueued (set the
 * fake to keep it running first); the balance before it too. The batch shows `running` a moment
 * before that poll's job row exists (runner.ts: the move, then nextStep's enqueue).
 */
export async function runningBatch(
  c: Ctx,
  payload: Record<string, unknown>
): Promise<{ batch_id: string; vendorId: string; before: number }> {
  const before = await c.app.svc.wallet.balance(c.accountId);
  const { batch_id } = (await submit(c, payload)).json();
  await until(c, batch_id, ['running']);
  const firstPoll = () =>
    c.app.svc.db
      .selectFrom('jobs')
      .select('unique_key')
      .where('unique_key', '=', `ai.batch:${batch_id}:1`)
      .executeTakeFirst();
  await eventually(async () => !!(await firstPoll()));
  if (!(await firstPoll())) throw new Error(`batch ${batch_id} runs, but its first poll was never enqueued`);
  const row = await c.app.svc.db
    .selectFrom('ai_batches')
    .select('vendor_batch_id')
    .where('batch_id', '=', batch_id)
    .executeTakeFirstOrThrow();
  return { batch_id, vendorId: row.vendor_batch_id as string, before };
}
