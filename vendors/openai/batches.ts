import { randomBytes } from 'node:crypto';
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
  errorMessage,
} from '../../core/kit/vendor.js';
import { chatRequest, chatResponse } from './wire.js';

// OpenAI's Batch API: the requests go up as a JSONL file (POST /files, purpose "batch"),
// POST /batches starts the batch, GET /batches/{id} tells its status, and the answers come
// back as the JSONL file named by output_file_id (failed requests in error_file_id).
// POST /batches/{id}/cancel moves it to `cancelling`, then `cancelled`.

interface OaBatch {
  id: string;
  status: 'validating' | 'failed' | 'in_progress' | 'finalizing' | 'completed' | 'expired' | 'cancelling' | 'cancelled';
  output_file_id?: string | null;
  error_file_id?: string | null;
  errors?: { data?: Array<{ code?: string; message?: string }> } | null;
}

interface OaBatchLine {
  custom_id: string;
  response?: { status_code: number; body: unknown } | null;
  error?: { code?: string; message?: string } | null;
}

export interface OpenAiBatchConfig {
  base_url: string;
  api_key: string;
  organization?: string;
}

/** multipart/form-data by hand: one text field and one file, nothing a library would add. */
function multipart(
  fields: Record<string, string>,
  file: { name: string; type: string; content: string }
): { body: string; type: string } {
  const b = `svc-${randomBytes(12).toString('hex')}`;
  let body = '';
  for (const [k, v] of Object.entries(fields))
    body += `--${b}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`;
  body += `--${b}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\nContent-Type: ${file.type}\r\n\r\n${file.content}\r\n--${b}--\r\n`;
  return { body, type: `multipart/form-data; boundary=${b}` };
}

export function openAiBatchCapabilities(cfg: OpenAiBatchConfig, ctx: VendorContext): Record<string, CapabilityImpl> {
  const id = ctx.instanceId;
  const auth = (creds?: Record<string, string>): Record<string, string> => {
    const key = creds?.api_key ?? cfg.api_key;
    return {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(cfg.organization ? { 'openai-organization': cfg.organization } : {}),
    };
  };
  const call = (path: string, init: RequestInit & { signal: AbortSignal }, creds?: Record<string, string>) =>
    vendorFetch(
      ctx.fetch,
      joinUrl(cfg.base_url, path),
      { ...init, headers: { ...auth(creds), ...(init.headers as Record<string, string>) } },
      id
    );
  const lineOf = async (
    fileId: string,
    customId: string,
    signal: AbortSignal,
    creds?: Record<string, string>
  ): Promise<OaBatchLine | undefined> => {
    const text = await (
      await call(`/files/${encodeURIComponent(fileId)}/content`, { method: 'GET', signal }, creds)
    ).text();
    for (const raw of text.split('\n')) {
      if (!raw.trim()) continue;
      const line = JSON.parse(raw) as OaBatchLine;
      if (line.custom_id === customId) return line;
    }
    return undefined;
  };

  const submit: CapabilityImpl<BatchSubmitInput, BatchSubmitOutput, CandidatePlan> = {
    async invoke(input, opts) {
      const p = planOf(opts.plan, id);
      const line = {
        custom_id: input.custom_id,
        method: 'POST',
        url: '/v1/chat/completions',
        body: chatRequest(input, p.model, false, 'max_completion_tokens'),
      };
      const form = multipart(
        { purpose: 'batch' },
        { name: `${input.custom_id}.jsonl`, type: 'application/jsonl', content: `${JSON.stringify(line)}\n` }
      );
      const file = await readJson<{ id?: string }>(
        await call(
          '/files',
          { method: 'POST', headers: { 'content-type': form.type }, body: form.body, signal: opts.signal },
          p.credentials
        ),
        id
      );
      if (!file.id) throw new VendorFailure('unavailable', `${id} stored the batch file without an id`);
      const batch = await readJson<Partial<OaBatch>>(
        await call(
          '/batches',
          {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            signal: opts.signal,
            body: JSON.stringify({
              input_file_id: file.id,
              endpoint: '/v1/chat/completions',
              completion_window: '24h',
              metadata: { custom_id: input.custom_id },
            }),
          },
          p.credentials
        ),
        id
      );
      if (!batch.id) throw new VendorFailure('unavailable', `${id} created a batch without an id`);
      return { vendor_batch_id: batch.id };
    },
    price: (input, _out, plan) => tokenPrice(plan, input.estimate),
  };

  const poll: CapabilityImpl<BatchPollInput, BatchPollOutput> = {
    async invoke(input, opts) {
      const b = await readJson<OaBatch>(
        await call(
          `/batches/${encodeURIComponent(input.vendor_batch_id)}`,
          { method: 'GET', signal: opts.signal },
          input.credentials
        ),
        id
      );
      if (b.status === 'failed')
        return {
          status: 'failed',
          error: b.errors?.data?.map((e) => e.message).join('; ') || 'the batch failed validation',
        };
      if (b.status !== 'completed' && b.status !== 'expired' && b.status !== 'cancelled') return { status: 'running' };
      // Finished (or expired with what it finished): our one request is in the output or the error file.
      const out = b.output_file_id
        ? await lineOf(b.output_file_id, input.custom_id, opts.signal, input.credentials)
        : undefined;
      if (out?.response && out.response.status_code < 300)
        return { status: 'succeeded', output: chatResponse(out.response.body as never, input.model, id) };
      const err =
        out
        ?? (b.error_file_id
          ? await lineOf(b.error_file_id, input.custom_id, opts.signal, input.credentials)
          : undefined);
      const message =
        err?.error?.message
        ?? (err?.response
          ? errorMessage(JSON.stringify(err.response.body))
          : `the batch ${b.status} without an answer`);
      return { status: 'failed', error: message };
    },
    price: () => 0,
  };

  const cancel: CapabilityImpl<BatchCancelInput, BatchCancelOutput> = {
    async invoke(input, opts) {
      const b = await readJson<Partial<OaBatch>>(
        await call(
          `/batches/${encodeURIComponent(input.vendor_batch_id)}/cancel`,
          { method: 'POST', signal: opts.signal },
          input.credentials
        ),
        id
      );
      return { vendor_status: b.status ?? 'unknown' };
    },
    price: () => 0,
  };

  return { 'ai.chat.batch': submit, 'ai.chat.batch.poll': poll, 'ai.chat.batch.cancel': cancel };
}
