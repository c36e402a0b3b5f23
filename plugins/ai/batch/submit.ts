import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { type Svc, newId, type CandidatePlan, fieldError } from '../../../core/kit/area.js';
import type { AiService } from '../service.js';
import type { ChatBodyT } from '../schemas.js';
import { BATCH_CAPABILITY, type BatchStore, type BatchRoute, type StoredBatchInput } from './store.js';

export const BATCH_JOB = 'ai.batch';

export interface BatchDeps {
  svc: Svc;
  ai: AiService;
  store: BatchStore;
  pollMs: number;
  /** Delay before a failed vendor cancel is tried again (then the job engine's backoff). */
  cancelRetryMs: number;
  log: Logger;
}

/** The caller's key is stored nowhere: a batch reads it again from the BYOK store when it runs. */
function withoutCredentials(plan: Record<string, CandidatePlan>): Record<string, CandidatePlan> {
  return Object.fromEntries(Object.entries(plan).map(([id, { credentials: _drop, ...p }]) => [id, p]));
}

/**
 * `batch_mode: true`: plan the chat as usual, give every candidate its model's batch rate (the
 * normal rate where the catalog has none), have the router reserve the dearest estimate within
 * the cost cap, and leave the rest to the `ai.batch` job. Answers 202 `{ batch_id, state }`.
 */
export async function submitBatch(
  d: BatchDeps,
  req: FastifyRequest,
  body: ChatBodyT
): Promise<{ batch_id: string; state: 'queued' }> {
  if (body.stream) {
    const message = 'stream and batch_mode cannot be used together: a batch answers later, at GET /v1/ai/batches/{id}.';
    throw fieldError('batch_mode', 'cannot be true with stream', message);
  }
  const p = await d.ai.prepareChat(req, body, false);
  const plan: Record<string, CandidatePlan> = {};
  for (const c of p.candidates) {
    plan[c.id] = c.byok
      ? c.plan
      : {
          ...c.plan,
          price_in: c.entry.price.batch_in ?? c.entry.price.in,
          price_out: c.entry.price.batch_out ?? c.entry.price.out,
        };
  }
  const input: StoredBatchInput = { ...p.input, plan };
  // The primary decides the route: its vendor's batch API when it has one, else a background call.
  const serving = (id: string) => !!d.svc.vendors.get(id)?.instance.capabilities[BATCH_CAPABILITY];
  const mode: BatchRoute['mode'] = serving(p.candidates[0].id) ? 'vendor' : 'direct';
  const planned = p.candidates
    .filter((c) => mode === 'direct' || serving(c.id))
    .map((c) => ({ id: c.id, plan: plan[c.id], ...(c.byok ? { byok: c.byok } : {}) }));
  const accountId = req.principal!.accountId;
  // The router prices the candidates at these rates, keeps those within the cost cap and holds the dearest.
  const { hold, route: kept } = await d.svc.router.reserve(mode === 'vendor' ? BATCH_CAPABILITY : 'ai.chat', p.input, {
    accountId,
    route: planned,
    maxCostMultiplier: body.max_cost_multiplier,
    holdCapability: BATCH_CAPABILITY,
  });
  const batchId = newId('batch');
  const order = kept.map((c) => c.id);
  const route: BatchRoute = { mode, order, byok: p.candidates.filter((c) => c.byok).map((c) => c.id) };
  const now = Date.now();
  try {
    await d.svc.db.transaction().execute(async (trx) => {
      await d.store.insert(
        {
          batch_id: batchId,
          account_id: accountId,
          state: 'queued',
          input: JSON.stringify({ ...input, plan: withoutCredentials(plan) }),
          route: JSON.stringify(route),
          hold_id: hold.holdId,
          hold_micros: hold.amount,
          vendor: null,
          vendor_batch_id: null,
          step: 0,
          result: null,
          error: null,
          cost_micros: 0,
          created_at: now,
          updated_at: now,
          completed_at: null,
        },
        trx
      );
      await d.svc.jobs.enqueue(
        { kind: BATCH_JOB, payload: { batch_id: batchId }, uniqueKey: `${BATCH_JOB}:${batchId}:0` },
        trx
      );
    });
  } catch (e) {
    await d.svc.wallet.release(hold);
    throw e;
  }
  d.svc.jobs.wake();
  req.meter.metered = true;
  return { batch_id: batchId, state: 'queued' };
}
