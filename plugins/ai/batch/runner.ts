import {
  isApiError,
  type ErrorCode,
  microsToUsd,
  type Attempt,
  type CallOptions,
  type JobHandler,
  type ChatInput,
  type ChatOutput,
  type BatchPollInput,
  type BatchPollOutput,
  type BatchSubmitInput,
  type BatchSubmitOutput,
} from '../../../core/kit/area.js';
import type { ChatResultT } from '../schemas.js';
import {
  BATCH_CAPABILITY,
  FINAL,
  holdOf,
  parseInput,
  parseRoute,
  type BatchRoute,
  type BatchRow,
  type StoredBatchInput,
} from './store.js';
import { BATCH_JOB, type BatchDeps } from './submit.js';
import { cancelAtVendor } from './cancel.js';

// One `ai.batch` job a step: submit (or, without a batch API, make the call), then one job per
// poll, each enqueued by the last with a unique key per step, so a step runs once however
// many nodes there are and a restart picks up where the database says the batch is.

/** The caller's BYOK keys, read again: a batch stores none. A key revoked meanwhile drops its vendor. */
async function restoreCredentials(
  d: BatchDeps,
  row: BatchRow,
  input: StoredBatchInput,
  route: BatchRoute
): Promise<string[]> {
  if (!route.byok.length) return route.order;
  const instances = route.byok.map((id) => d.svc.vendors.get(id)).filter((i) => !!i);
  const byok = await d.svc.router.callerCredentials(row.account_id, instances);
  return route.order.filter((id) => {
    if (!route.byok.includes(id)) return true;
    const creds = byok.get(id);
    if (creds) input.plan[id] = { ...input.plan[id], credentials: creds };
    return !!creds;
  });
}

/** A stored candidate as the router takes it: its plan, and its BYOK use when its key was read again. */
function routed(input: StoredBatchInput, id: string) {
  const plan = input.plan[id];
  return { id, plan, ...(plan?.credentials ? { byok: { credentials: plan.credentials, fee: plan.fee } } : {}) };
}

function callOpts(row: BatchRow, order: string[], input: StoredBatchInput): CallOptions {
  // charge: false — the batch's own hold is settled when the answer arrives.
  const route = order.map((id) => routed(input, id));
  return { accountId: row.account_id, route, charge: false, ref: row.batch_id };
}

/** The capability input of a stored batch: its plans go to the router, never into the input. */
function chatOf(input: StoredBatchInput): ChatInput {
  const { plan: _plans, ...chat } = input;
  return chat;
}

/** A poll that fails is retried with backoff for about an hour: a vendor's blip must not fail a day-long batch. */
const POLL_ATTEMPTS = 12;

async function nextStep(d: BatchDeps, row: BatchRow, step: number): Promise<void> {
  await d.svc.jobs.enqueue({
    kind: BATCH_JOB,
    payload: { batch_id: row.batch_id },
    runAt: Date.now() + d.pollMs,
    maxAttempts: POLL_ATTEMPTS,
    uniqueKey: `${BATCH_JOB}:${row.batch_id}:${step}`,
  });
}

async function succeed(
  d: BatchDeps,
  row: BatchRow,
  input: StoredBatchInput,
  vendor: string,
  out: ChatOutput,
  attempts: Attempt[]
): Promise<void> {
  // Priced by the router as the chat it answers (at the batch rates its plan carries), markup and fee included.
  const cost = d.svc.router.charge('ai.chat', chatOf(input), routed(input, vendor), out);
  const now = Date.now();
  const result: ChatResultT = {
    content: out.content,
    finish_reason: out.finish_reason,
    ...(out.tool_calls?.length ? { tool_calls: out.tool_calls } : {}),
    usage: {
      input_tokens: out.usage.input_tokens,
      output_tokens: out.usage.output_tokens,
      total_tokens: out.usage.input_tokens + out.usage.output_tokens,
    },
    metadata: {
      vendor,
      model: input.plan[vendor]?.model ?? out.model,
      latency_ms: now - Number(row.created_at),
      cost_usd: microsToUsd(cost),
      cached: false,
      byok: parseRoute(row).byok.includes(vendor),
      attempts: attempts.map((a) => ({ ...a, model: a.model ?? input.plan[a.vendor]?.model })),
    },
  };
  // The move and the charge commit together: a cancel racing it either finds the batch
  // succeeded (409) or wins and releases the hold, and a node dying leaves neither or both.
  await d.svc.db.transaction().execute(async (trx) => {
    const patch = {
      state: 'succeeded' as const,
      vendor,
      result: JSON.stringify(result),
      cost_micros: cost,
      completed_at: now,
    };
    if (await d.store.move(row.batch_id, ['queued', 'running'], patch, undefined, trx))
      await d.svc.wallet.settleIn(trx, holdOf(row), cost, { vendor, ref: row.batch_id });
  });
}

/** True when this call failed the batch (false: it was already final, e.g. canceled meanwhile). */
async function fail(d: BatchDeps, row: BatchRow, code: ErrorCode, message: string): Promise<boolean> {
  const patch = { state: 'failed' as const, error: JSON.stringify({ code, message }), completed_at: Date.now() };
  const moved = await d.svc.db.transaction().execute(async (trx) => {
    if (!(await d.store.move(row.batch_id, ['queued', 'running'], patch, undefined, trx))) return false;
    await d.svc.wallet.release(holdOf(row), trx);
    return true;
  });
  if (!moved) return false;
  d.log.info({ batch_id: row.batch_id, code }, 'chat batch failed; its reservation is released');
  return true;
}

/** The gateway gives up on a batch the vendor may still be running: nobody will pay for its answer, so stop it there too. */
async function giveUp(d: BatchDeps, row: BatchRow, code: ErrorCode, message: string): Promise<void> {
  if (await fail(d, row, code, message)) await cancelAtVendor(d, row);
}

async function runDirect(d: BatchDeps, row: BatchRow, input: StoredBatchInput, order: string[]): Promise<void> {
  // Canceled before it started: make no call.
  if (row.state === 'queued' && !(await d.store.move(row.batch_id, ['queued'], { state: 'running' }))) return;
  const r = await d.svc.router.call<ChatInput, ChatOutput>('ai.chat', chatOf(input), callOpts(row, order, input));
  await succeed(d, row, input, r.vendor, r.output, r.attempts);
}

async function submit(
  d: BatchDeps,
  row: BatchRow,
  input: StoredBatchInput,
  route: BatchRoute,
  order: string[]
): Promise<void> {
  const r = await d.svc.router.call<BatchSubmitInput, BatchSubmitOutput>(
    BATCH_CAPABILITY,
    { ...chatOf(input), custom_id: row.batch_id },
    callOpts(row, order, input)
  );
  const moved = await d.store.move(row.batch_id, ['queued'], {
    state: 'running',
    vendor: r.vendor,
    vendor_batch_id: r.output.vendor_batch_id,
    step: 1,
    route: JSON.stringify({ ...route, attempts: r.attempts }),
  });
  if (moved) await nextStep(d, row, 1);
  // Canceled (or failed) while the submit was out: the vendor's batch is nobody's now.
  else await cancelAtVendor(d, row, r.vendor, r.output.vendor_batch_id);
}

async function poll(d: BatchDeps, row: BatchRow, input: StoredBatchInput): Promise<void> {
  const vendor = row.vendor!;
  // Hours may pass: keep the hold from being taken for one a dead call left behind.
  await d.svc.wallet.refresh(holdOf(row));
  const pollInput: BatchPollInput = {
    vendor_batch_id: row.vendor_batch_id!,
    custom_id: row.batch_id,
    model: input.plan[vendor]?.model ?? '',
    credentials: input.plan[vendor]?.credentials,
    request: { response_format: input.response_format, tools: input.tools, tool_choice: input.tool_choice },
  };
  const r = await d.svc.router.call<BatchPollInput, BatchPollOutput>(
    'ai.chat.batch.poll',
    pollInput,
    callOpts(row, [vendor], input)
  );
  const o = r.output;
  if (o.status === 'succeeded') return succeed(d, row, input, vendor, o.output, parseRoute(row).attempts ?? []);
  if (o.status === 'failed') return void (await fail(d, row, 'vendor_error', `${vendor}: ${o.error}`));
  if (await d.store.move(row.batch_id, ['running'], { step: row.step + 1 }, row.step))
    await nextStep(d, row, row.step + 1);
}

/** The router's summary and what each vendor said: a batch has no response to carry `details`. */
function withAttempts(message: string, attempts: unknown): string {
  const said = Array.isArray(attempts)
    ? (attempts as Attempt[]).filter((a) => a.error).map((a) => `${a.vendor}: ${a.error!.message}`)
    : [];
  return said.length ? `${message} ${said.join('; ')}` : message;
}

export function batchJobHandler(d: BatchDeps): JobHandler<{ batch_id: string }> {
  return async (job) => {
    const row = await d.store.get(job.payload.batch_id);
    if (!row || FINAL.includes(row.state)) return;
    const input = parseInput(row);
    const route = parseRoute(row);
    try {
      const order = await restoreCredentials(d, row, input, route);
      if (!order.length)
        return await giveUp(
          d,
          row,
          'no_vendor_available',
          'No vendor is left for this batch: the key it was submitted with was revoked.'
        );
      if (route.mode === 'direct') return await runDirect(d, row, input, order);
      if (row.state === 'queued') return await submit(d, row, input, route, order);
      return await poll(d, row, input);
    } catch (e) {
      // The router already tried every candidate: a submit that failed there is final. A poll
      // that failed (the vendor briefly down) is tried again until the job's attempts run out.
      const final = row.state === 'queued' || route.mode === 'direct' || job.attempt >= job.maxAttempts;
      if (!final) throw e;
      // A poll whose attempts ran out leaves a vendor batch behind: giveUp cancels it there.
      await giveUp(
        d,
        row,
        isApiError(e) ? e.code : 'internal_error',
        isApiError(e) ? withAttempts(e.message, e.details.attempts) : 'The batch could not be run.'
      );
      if (!isApiError(e)) d.log.error({ err: e, batch_id: row.batch_id }, 'chat batch step failed');
    }
  };
}

/** A batch whose job died with its node after its last attempt: fail it and give its money back. */
export async function failBatch(d: BatchDeps, batchId: string, error: string): Promise<void> {
  const row = await d.store.get(batchId);
  if (row && !FINAL.includes(row.state)) await giveUp(d, row, 'internal_error', `The batch could not be run: ${error}`);
}
