import { apiError, type ApiError, type Attempt, type ChatMessage } from '../../../core/kit/area.js';
import type { ChatResultT } from '../schemas.js';
import type { ChatRequest } from '../service.js';
import type { StreamWriter } from '../stream-runner.js';
import type { OaChatBodyT } from './schemas.js';

export const ROUTED = new Set(['auto', 'balanced', 'cheapest', 'smartest']);

/**
 * OpenAI request fields passed through as they are to vendors speaking OpenAI's wire
 * (ChatInput.openai_params): they change the answer, not its shape. `n` and `logprobs` are
 * not among them (one choice is answered, and logprobs are not carried back).
 */
const PASS_THROUGH = [
  'reasoning_effort',
  'verbosity',
  'parallel_tool_calls',
  'presence_penalty',
  'frequency_penalty',
  'logit_bias',
  'seed',
  'top_p',
  'user',
  'service_tier',
] as const;

function text(content: OaChatBodyT['messages'][number]['content'], i: number): string | null {
  if (content === undefined || content === null || typeof content === 'string') return content ?? null;
  return content
    .map((p) => {
      if (p.type !== 'text')
        throw apiError(
          'validation_failed',
          `Content parts of type "${p.type}" are not supported on this endpoint yet; send text.`,
          { param: `messages[${i}].content` }
        );
      return p.text ?? '';
    })
    .join('');
}

/** An OpenAI chat request as the service's chat: the model pins, unless it names a routing preference. */
export function fromOpenAi(b: OaChatBodyT): ChatRequest {
  const messages: ChatMessage[] = b.messages.map((m, i) => ({
    role: (m.role === 'developer' ? 'system' : m.role) as ChatMessage['role'],
    content: text(m.content, i),
    ...(m.tool_calls?.length
      ? { tool_calls: m.tool_calls.map((t) => ({ id: t.id, name: t.function.name, arguments: t.function.arguments })) }
      : {}),
    ...(m.tool_call_id ? { tool_call_id: m.tool_call_id } : {}),
  }));
  const routed = ROUTED.has(b.model);
  const extra = b as Record<string, unknown>;
  // Priority processing bills above the catalog's price, which the reservation and the charge
  // are made of: refused rather than undercharged.
  if (extra.service_tier === 'priority') {
    throw apiError(
      'validation_failed',
      'service_tier "priority" is not offered here: it bills above the price this '
        + 'gateway charges. Send "auto", "default" or "flex", or leave it out.',
      { param: 'service_tier' }
    );
  }
  const params = Object.fromEntries(PASS_THROUGH.filter((k) => extra[k] != null).map((k) => [k, extra[k]]));
  return {
    messages,
    ...(routed
      ? { prefer: b.model === 'auto' ? 'balanced' : (b.model as 'balanced' | 'cheapest' | 'smartest') }
      : { model: b.model }),
    ...(b.temperature != null ? { temperature: b.temperature } : {}),
    ...(b.max_completion_tokens != null || b.max_tokens != null
      ? { max_tokens: (b.max_completion_tokens ?? b.max_tokens)! }
      : {}),
    ...(b.tools?.length
      ? {
          tools: b.tools.map((t) => ({
            type: 'function' as const,
            function: {
              name: t.function.name,
              description: t.function.description,
              parameters: t.function.parameters,
              ...(t.function.strict != null ? { strict: t.function.strict } : {}),
            },
          })),
        }
      : {}),
    ...(b.response_format ? { response_format: b.response_format } : {}),
    ...(b.tool_choice != null ? { tool_choice: b.tool_choice } : {}),
    ...(b.stop?.length ? { stop: typeof b.stop === 'string' ? [b.stop] : b.stop } : {}),
    ...(b.cache_strategy ? { cache_strategy: b.cache_strategy } : {}),
    ...(Object.keys(params).length ? { openai_params: params } : {}),
  };
}

export function completion(r: ChatResultT, id: string) {
  return {
    id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: r.metadata.model,
    choices: [
      {
        index: 0,
        logprobs: null,
        finish_reason: r.finish_reason,
        message: {
          role: 'assistant',
          content: r.content,
          refusal: null,
          ...(r.tool_calls?.length
            ? {
                tool_calls: r.tool_calls.map((t) => ({
                  id: t.id,
                  type: 'function',
                  function: { name: t.name, arguments: t.arguments },
                })),
              }
            : {}),
        },
      },
    ],
    usage: {
      prompt_tokens: r.usage.input_tokens,
      completion_tokens: r.usage.output_tokens,
      total_tokens: r.usage.total_tokens,
    },
  };
}

const TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'insufficient_quota',
  403: 'permission_error',
  404: 'not_found_error',
  409: 'conflict_error',
  413: 'invalid_request_error',
  415: 'invalid_request_error',
  422: 'invalid_request_error',
  429: 'rate_limit_error',
};

/** OpenAI's error body: `{ error: { message, type, param, code } }`. */
export function oaError(e: ApiError) {
  const type = TYPES[e.status] ?? 'api_error';
  return { error: { message: withCauses(e), type, param: e.param ?? null, code: e.code } };
}

/**
 * OpenAI's error shape has no `details`, and its clients show only the message: a failed
 * routing says there what each vendor answered (the router's scrubbed, bounded excerpts).
 */
function withCauses(e: ApiError): string {
  if (e.code !== 'vendor_error' && e.code !== 'vendor_timeout') return e.message;
  const attempts = (Array.isArray(e.details.attempts) ? e.details.attempts : []) as Attempt[];
  const why = (a: Attempt) =>
    a.status === 'skipped_cost_cap' ? 'skipped, over the cost cap' : (a.error?.message ?? a.status);
  const causes = attempts.filter((a) => a.status !== 'ok').map((a) => `${a.vendor}: ${why(a)}`);
  return causes.length ? `${e.message} ${causes.join('; ')}` : e.message;
}

/** chat.completion.chunk events, the finishing chunk, the usage chunk when asked, `[DONE]`. */
export function openAiWriter(id: string, model: string, includeUsage: boolean): StreamWriter {
  const created = Math.floor(Date.now() / 1000);
  let first = true;
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
  return {
    head: (vendor) => ({ 'x-svc-vendor': vendor }),
    event: (ev) => {
      const delta: Record<string, unknown> = first ? { role: 'assistant' } : {};
      first = false;
      if (ev.delta) delta.content = ev.delta;
      if (ev.tool_calls?.length) {
        delta.tool_calls = ev.tool_calls.map((t) => ({
          index: t.index,
          ...(t.id ? { id: t.id, type: 'function' } : {}),
          function: { ...(t.name ? { name: t.name } : {}), arguments: t.arguments ?? '' },
        }));
      }
      return chunk(delta, null);
    },
    end: (e) => {
      // An answer with no content at all (a filter, a reasoning model out of tokens) still
      // names its role first: the SDK's stream helper throws "missing role for choice 0" otherwise.
      let out = first ? chunk({ role: 'assistant', content: '' }, null) : '';
      first = false;
      out += chunk({}, e.finish_reason);
      if (includeUsage) {
        const usage = {
          prompt_tokens: e.usage.input_tokens,
          completion_tokens: e.usage.output_tokens,
          total_tokens: e.usage.input_tokens + e.usage.output_tokens,
        };
        out += `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage })}\n\n`;
      }
      return `${out}data: [DONE]\n\n`;
    },
    error: (e) => `data: ${JSON.stringify(oaError(e))}\n\n`,
  };
}
