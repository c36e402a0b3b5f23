import {
  type CapabilityImpl,
  type VendorContext,
  VendorFailure,
  planOf,
  tokenPrice,
  type CandidatePlan,
  type BatchCancelInput,
  type BatchCancelOutput,
  type BatchPollInput,
  type BatchPollOutput,
  type BatchSubmitInput,
  type BatchSubmitOutput,
  vendorFetch,
  readJson,
  joinUrl,
} from '../../core/kit/vendor.js';
import { messagesRequest, messagesResponse } from './wire.js';
import { answerTool } from './tools.js';

// Anthropic Message Batches: POST /v1/messages/batches with `requests: [{custom_id, params}]`,
// GET /v1/messages/batches/{id} until `processing_status` is `ended`, then the JSONL at
// `results_url` holds one `{custom_id, result: {type: succeeded|errored|canceled|expired}}` a request.
// POST /v1/messages/batches/{id}/cancel moves it to `canceling` until it has ended.

interface AnBatch {
  id?: string;
  processing_status?: 'in_progress' | 'canceling' | 'ended';
  results_url?: string | null;
}

interface AnResultLine {
  custom_id: string;
  result:
    | { type: 'succeeded'; message: unknown }
    | { type: 'errored'; error?: { error?: { message?: string }; message?: string } }
    | { type: 'canceled' | 'expired' };
}

export function anthropicBatchCapabilities(
  cfg: { base_url: string; default_max_tokens: number },
  ctx: VendorContext,
  headers: (creds?: Record<string, string>) => Record<string, string>
): Record<string, CapabilityImpl> {
  const id = ctx.instanceId;
  const submit: CapabilityImpl<BatchSubmitInput, BatchSubmitOutput, CandidatePlan> = {
    async invoke(input, opts) {
      const p = planOf(opts.plan, id);
      const params = messagesRequest(
        input,
        p.model,
        input.max_tokens ?? input.estimate.output_tokens ?? cfg.default_max_tokens,
        false
      );
      const res = await vendorFetch(
        ctx.fetch,
        joinUrl(cfg.base_url, '/v1/messages/batches'),
        {
          method: 'POST',
          headers: headers(p.credentials),
          body: JSON.stringify({ requests: [{ custom_id: input.custom_id, params }] }),
          signal: opts.signal,
        },
        id
      );
      const b = await readJson<AnBatch>(res, id);
      if (!b.id) throw new VendorFailure('unavailable', `${id} created a message batch without an id`);
      return { vendor_batch_id: b.id };
    },
    price: (input, _out, plan) => tokenPrice(plan, input.estimate),
  };
  const poll: CapabilityImpl<BatchPollInput, BatchPollOutput> = {
    async invoke(input, opts) {
      const get = (url: string) =>
        vendorFetch(ctx.fetch, url, { method: 'GET', headers: headers(input.credentials), signal: opts.signal }, id);
      const b = await readJson<AnBatch>(
        await get(joinUrl(cfg.base_url, `/v1/messages/batches/${encodeURIComponent(input.vendor_batch_id)}`)),
        id
      );
      if (b.processing_status !== 'ended') return { status: 'running' };
      if (!b.results_url) throw new VendorFailure('unavailable', `${id}: the batch ended without a results_url`);
      const text = await (await get(b.results_url)).text();
      const line = text
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l) as AnResultLine)
        .find((l) => l.custom_id === input.custom_id);
      if (!line) return { status: 'failed', error: 'the batch ended without a result for the request' };
      const r = line.result;
      if (r.type === 'succeeded')
        return {
          status: 'succeeded',
          output: messagesResponse(
            r.message as never,
            input.model,
            id,
            input.request && answerTool(input.request)?.name
          ),
        };
      if (r.type === 'errored')
        return { status: 'failed', error: r.error?.error?.message ?? r.error?.message ?? 'the request errored' };
      return { status: 'failed', error: `the request was ${r.type}` };
    },
    price: () => 0,
  };
  const cancel: CapabilityImpl<BatchCancelInput, BatchCancelOutput> = {
    async invoke(input, opts) {
      const res = await vendorFetch(
        ctx.fetch,
        joinUrl(cfg.base_url, `/v1/messages/batches/${encodeURIComponent(input.vendor_batch_id)}/cancel`),
        {
          method: 'POST',
          headers: headers(input.credentials),
          signal: opts.signal,
        },
        id
      );
      return { vendor_status: (await readJson<AnBatch>(res, id)).processing_status ?? 'unknown' };
    },
    price: () => 0,
  };
  return { 'ai.chat.batch': submit, 'ai.chat.batch.poll': poll, 'ai.chat.batch.cancel': cancel };
}
